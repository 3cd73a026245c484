import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ServiceError } from '../../src/service/errors.js';
import { Requests, defaultTimeouts, retryAfterSeconds } from '../../src/service/request.js';
import type { FetchLike } from '../../src/service/request.js';

// The request engine on its own, with transports written here: what it sends, and what it makes of each answer. The
// client's tests drive the same engine against the emulator over real HTTP.
const apiKey = 'sk-test-key-that-must-never-leak';
const requests = (timeouts = {}) =>
  new Requests({ apiKey, apiKeyHeader: 'x-svc-api-key', timeouts: { ...defaultTimeouts, ...timeouts } });
const start = (transport: FetchLike, options = {}, streaming = false) =>
  requests().start(
    transport,
    'http://service.test/v1/conversations',
    'POST',
    { a: 1 },
    'application/json',
    options,
    streaming,
  );

describe('the request engine', () => {
  // The engine's timers never hold a process open; this one holds the test's open while it waits on them.
  const keepAlive = setInterval(() => {}, 1000);
  after(() => clearInterval(keepAlive));

  it('sends the API key in its header, the body as JSON, no redirect followed, and ends the request once done', async () => {
    let seen: { url: string; init: RequestInit } | undefined;
    const started = await start(async (url, init) => {
      seen = { url: String(url), init: init! };
      return Response.json({ ok: true });
    });
    assert.equal(seen!.url, 'http://service.test/v1/conversations');
    assert.equal(seen!.init.method, 'POST');
    assert.equal(seen!.init.redirect, 'manual');
    assert.deepEqual(seen!.init.headers, {
      accept: 'application/json',
      'x-svc-api-key': apiKey,
      'content-type': 'application/json',
    });
    assert.equal(seen!.init.body, '{"a":1}');
    assert.deepEqual(await requests().readJson(started), { ok: true });
    started.done();
    assert.equal(seen!.init.signal!.aborted, true, 'the request is ended once the call is over');
  });

  it('turns a refusal into a ServiceError with the service’s code, a bounded message without the key, and Retry-After', async () => {
    const refusal = Response.json(
      { error: { code: 'too_busy', message: `Slow down, ${apiKey}`, requestId: 'req-1' } },
      { status: 429, headers: { 'retry-after': '3' } },
    );
    const error = (await start(async () => refusal).catch(e => e)) as ServiceError;
    assert.ok(error instanceof ServiceError);
    assert.equal(error.status, 429);
    assert.equal(error.code, 'too_busy');
    assert.equal(error.requestId, 'req-1');
    assert.equal(error.retryAfter, 3);
    assert.ok(!error.message.includes(apiKey), 'the key is redacted');
  });

  it('reads a Retry-After given as a date as the seconds until it', async () => {
    const at = new Date(Date.now() + 120_000).toUTCString();
    const error = (await start(async () => Response.json({}, { status: 503, headers: { 'retry-after': at } })).catch(
      e => e,
    )) as ServiceError;
    assert.equal(error.status, 503);
    // Two minutes from when it was made, less the time the call took: whole seconds, at most 120.
    assert.ok(
      Number.isInteger(error.retryAfter) && error.retryAfter! > 100 && error.retryAfter! <= 120,
      `${error.retryAfter}`,
    );
    const now = Date.parse('Sun, 29 Nov 2026 10:00:00 GMT');
    assert.equal(retryAfterSeconds('Sun, 29 Nov 2026 10:00:30 GMT', now), 30);
    assert.equal(retryAfterSeconds('Sunday, 29-Nov-26 10:01:00 GMT', now), 60, 'the obsolete form HTTP still allows');
    // A date past or now, text that is no HTTP date (which `Date.parse` reads as one), an asctime date (read as local
    // time), none, no time.
    for (const value of [
      'Sun, 29 Nov 2026 09:59:59 GMT',
      'Sun, 29 Nov 2026 10:00:00 GMT',
      'soon 2030',
      'Sun Nov 29 10:01:00 2026',
      'soon',
      '',
      ' ',
      '0',
      '-5',
    ]) {
      assert.equal(retryAfterSeconds(value, now), undefined, value);
    }
    assert.equal(retryAfterSeconds(null, now), undefined);
    assert.equal(retryAfterSeconds('2.5', now), 2.5);
  });

  it('refuses an HTML page and a body that is not a JSON object as bad responses, retryable', async () => {
    const page = new Response('<h1>502</h1>', { headers: { 'content-type': 'text/html; charset=utf-8' } });
    await assert.rejects(
      start(async () => page),
      { code: 'bad_response', retryable: true },
    );
    for (const body of ['[]', 'null', 'not json']) {
      const started = await start(async () => new Response(body));
      await assert.rejects(requests().readJson(started), { code: 'bad_response', retryable: true }, body);
    }
  });

  it('fails a network failure as network_error with its cause, and a wait past a timeout by that timeout', async () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await assert.rejects(
      start(async () => {
        throw new TypeError('fetch failed', { cause });
      }),
      { code: 'network_error', retryable: true, message: /ECONNREFUSED/ },
    );
    const never: FetchLike = (_url, init) =>
      new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason)));
    const slow = requests({ connectMs: 20 });
    await assert.rejects(slow.start(never, 'http://service.test/x', 'GET', undefined, 'text/event-stream', {}, true), {
      code: 'connect_timeout',
      status: 0,
    });
    await assert.rejects(
      requests({ connectMs: 5, firstByteMs: 20 }).start(
        never,
        'http://service.test/x',
        'GET',
        undefined,
        'a',
        {},
        false,
      ),
      { code: 'first_byte_timeout' },
      'a whole answer waits for its headers as long as for a first byte',
    );
  });

  it('rethrows the caller’s own abort, not an error of the service', async () => {
    const controller = new AbortController();
    const reason = new Error('the caller left');
    const pending = start(
      (_url, init) =>
        new Promise((_resolve, reject) => init!.signal!.addEventListener('abort', () => reject(init!.signal!.reason))),
      { signal: controller.signal },
    );
    controller.abort(reason);
    await assert.rejects(pending, error => error === reason);
  });

  it('turns a body that breaks while read into the code it is read under', async () => {
    const body = new ReadableStream({
      start(controller) {
        controller.error(new TypeError('terminated'));
      },
    });
    const started = await start(async () => new Response(body));
    await assert.rejects(
      requests().guard(started, 'stream_error', () => started.response.text()),
      { code: 'stream_error', retryable: true },
    );
  });
});
