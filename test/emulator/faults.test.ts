import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Faults, noFaults } from '../../src/emulator/faults.js';
import { createPersona, expectError, inProcess, sseData } from '../support/service.js';

describe('faults', () => {
  it('fails the next N matching requests with the status, then recovers', async () => {
    const { request } = inProcess();
    const { conversationId } = await createPersona(request);
    const set = await request('POST', '/__emulator/faults', { status: { code: 500, count: 2, on: 'continue' } });
    assert.equal(set.status, 200);
    assert.equal((await request('GET', '/conversations')).status, 200, 'a read is not a continue');
    for (let i = 0; i < 2; i++) {
      await expectError(
        request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' }),
        500,
        'injected_fault',
      );
    }
    assert.equal((await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' })).status, 200);
    const settings = await (await request('GET', '/__emulator/faults')).json();
    assert.equal(settings.status, null);
  });

  it('answers the next N matching requests with an HTML page and status 200, then recovers', async () => {
    const { request, emulator } = inProcess();
    const { conversationId } = await createPersona(request);
    await request('POST', '/__emulator/faults', { html: { count: 1, on: 'continue' } });
    assert.equal((await request('GET', `/conversations/${conversationId}`)).status, 200, 'a read is not a continue');
    const page = await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /^<!DOCTYPE html>.*Bad Gateway/s);
    assert.equal(emulator.store.get(conversationId)!.chatMessagesCount, 0, 'the message never reached the service');
    const next = await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' });
    assert.equal(((await next.json()) as { object: string }).object, 'chat.completion');
    assert.equal((await (await request('GET', '/__emulator/faults')).json()).html, null);
  });

  it('cuts a stream after N chunks, without a terminal chunk, and stores nothing', async () => {
    const { request, emulator } = inProcess();
    const { conversationId } = await createPersona(request);
    await request('POST', '/__emulator/faults', { cut: { afterChunks: 4 } });
    const res = await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'returns' });
    const reader = res.body!.getReader();
    let text = '';
    const decoder = new TextDecoder();
    await assert.rejects(async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value);
      }
    }, /cut/);
    assert.equal(text.split('\n\n').filter(Boolean).length, 4);
    assert.ok(!text.includes('finish_reason":"stop') && !text.includes('[DONE]'));
    assert.equal(emulator.store.get(conversationId)!.chatMessagesCount, 0);
    const next = await sseData(
      await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'returns' }),
    );
    assert.equal(next.at(-1), '[DONE]', 'a cut with count 1 applies once');
  });

  it('delays the response by the latency and every chunk by the chunk delay', async () => {
    const { request } = inProcess({ faults: { latencyMs: 120 } });
    let started = performance.now();
    await request('GET', '/conversations');
    // Sleeps make time pass at least as long as asked (a timer may fire up to a millisecond early): only lower
    // bounds, which a busy machine cannot break.
    assert.ok(performance.now() - started >= 119, 'the latency was applied');
    await request('DELETE', '/__emulator/faults');
    const { conversationId } = await createPersona(request);
    await request('POST', '/__emulator/faults', { chunkDelayMs: 20 });
    started = performance.now();
    const data = await sseData(
      await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'membership' }),
    );
    const deltas = data.length - 2; // the last chunk and [DONE] come without a delay
    assert.ok(performance.now() - started >= deltas * 19, 'every chunk was delayed');
  });

  it('rejects fault settings it does not know, and resets', async () => {
    const { request } = inProcess();
    await expectError(request('POST', '/__emulator/faults', { latency: 5 }), 400, 'invalid_request');
    await expectError(
      request('POST', '/__emulator/faults', { status: { code: 200 } }),
      400,
      'invalid_request',
      /status/,
    );
    await request('POST', '/__emulator/faults', { latencyMs: 5, cut: { afterChunks: 1, count: null } });
    assert.deepEqual(await (await request('DELETE', '/__emulator/faults')).json(), {
      latencyMs: 0,
      chunkDelayMs: 0,
      status: null,
      html: null,
      cut: null,
    });
  });

  it('never faults its own control routes, and asks a client refused with 429 to come back in a second', async () => {
    const { request } = inProcess({ faults: { status: { code: 429, count: null } } });
    assert.equal((await request('GET', '/__emulator/faults')).status, 200, 'a control route');
    const body = await expectError(request('GET', '/conversations'), 429, 'injected_fault');
    assert.match(body.error.message, /429/);
    const again = await request('GET', '/conversations');
    assert.equal(again.headers.get('retry-after'), '1');
    assert.equal(again.status, 429, 'count null: until cleared');
  });

  describe('the settings', () => {
    it('count down a status or html fault only on the requests it is on', () => {
      const faults = new Faults({ status: { code: 503, count: 2, on: 'create' }, html: { on: 'manage' } });
      assert.equal(faults.takeStatus('read'), undefined);
      assert.equal(faults.takeHtml('continue'), false);
      assert.deepEqual(
        [faults.takeStatus('create'), faults.takeStatus('create'), faults.takeStatus('create')],
        [503, 503, undefined],
      );
      assert.deepEqual([faults.takeHtml('manage'), faults.takeHtml('manage')], [true, false], 'count 1 by default');
      assert.deepEqual(faults.settings, noFaults, 'spent faults are cleared');
    });

    it('keep a fault of count null until it is cleared', () => {
      const faults = new Faults({ html: { count: null }, cut: { afterChunks: 0, count: null } });
      for (let i = 0; i < 3; i++) {
        assert.equal(faults.takeHtml(i % 2 ? 'read' : 'continue'), true);
        assert.equal(faults.takeCut(), 0);
      }
      faults.reset();
      assert.equal(faults.takeHtml('read'), false);
      assert.equal(faults.takeCut(), undefined);
    });

    it('cut the next stream once by default, after the chunks it says', () => {
      const faults = new Faults();
      faults.set({ cut: { afterChunks: 3 } });
      assert.deepEqual([faults.takeCut(), faults.takeCut()], [3, undefined]);
    });

    it('merge what is set into what is there, hand out copies, and refuse what is out of range', () => {
      const faults = new Faults({ latencyMs: 10 });
      assert.deepEqual(faults.set({ chunkDelayMs: 5 }), { ...noFaults, latencyMs: 10, chunkDelayMs: 5 });
      const copy = faults.settings;
      copy.latencyMs = 99;
      assert.equal(faults.settings.latencyMs, 10, 'a copy changes nothing');
      assert.throws(() => faults.set({ latencyMs: -1 }), { name: 'ZodError' });
      assert.throws(() => new Faults({ status: { code: 302 } }), { name: 'ZodError' });
      assert.equal(faults.settings.latencyMs, 10, 'a refused setting changes nothing');
    });
  });
});
