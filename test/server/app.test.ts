import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { apiKey } from '../support/service.js';
import { expectError, setup, transcript } from '../support/backend.js';

describe('backend', () => {
  after(() => {
    const leaks = transcript.filter(text => text.includes(apiKey));
    assert.deepEqual(leaks, [], 'the API key appears in no response, header, SSE frame or log line');
    assert.ok(transcript.length > 100, 'the scan saw the whole run');
  });

  describe('validation', () => {
    it('refuses bad input with a 4xx envelope and never calls the service', async () => {
      const { session, conversation, api, request, upstream } = setup({
        backend: { limits: { bodyMaxBytes: 1024, messageMaxLength: 50 } },
      });
      const { token } = await session();
      const id = await conversation(token);
      const before = upstream.length;
      const send = (body: unknown, headers: Record<string, string> = {}) =>
        api('POST', `/conversations/${id}/messages`, token, {
          body,
          headers: { 'idempotency-key': crypto.randomUUID(), ...headers },
        });
      await expectError(send({ message: 'x'.repeat(51) }), 400, 'invalid_request');
      await expectError(send({ message: '   ' }), 400, 'invalid_request');
      await expectError(send({ message: 42 }), 400, 'invalid_request');
      await expectError(send({ message: 'hi', externalUserId: 'victim' }), 400, 'invalid_request');
      await expectError(send({ text: 'hi' }), 400, 'invalid_request');
      await expectError(send('{"message":', { 'content-type': 'application/json' }), 400, 'invalid_request');
      await expectError(
        send('message=hi', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'unsupported_media_type',
      );
      await expectError(
        api('POST', `/conversations/${id}/messages`, token, { body: { message: 'hi' } }),
        400,
        'invalid_request',
      );
      await expectError(send({ message: 'hi' }, { 'idempotency-key': 'short' }), 400, 'invalid_request');
      await expectError(send({ message: 'x'.repeat(2000) }), 413, 'payload_too_large');
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ message: 'x'.repeat(3000) })));
          controller.close();
        },
      });
      await expectError(
        request('POST', `/conversations/${id}/messages`, {
          body: chunked,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': crypto.randomUUID(),
          },
        }),
        413,
        'payload_too_large',
      );
      for (const bad of ['../admin', '%2F..%2Fadmin', 'x'.repeat(5000), 'ünïcode', '123']) {
        const path = `/conversations/${encodeURIComponent(bad)}`;
        await expectError(api('GET', path, token), 400, 'invalid_request');
        await expectError(api('PATCH', path, token, { body: { name: 'x' } }), 400, 'invalid_request');
        await expectError(
          api('POST', `${path}/messages`, token, {
            body: { message: 'hi' },
            headers: { 'idempotency-key': crypto.randomUUID() },
          }),
          400,
          'invalid_request',
        );
      }
      await expectError(api('PATCH', `/conversations/${id}`, token, { body: {} }), 400, 'invalid_request');
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { name: 'x'.repeat(101) } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { status: 'closed now!' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { active: 'no' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { metadata: { nested: { a: 1 } } } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { metadata: { 'bad key!': 'v' } } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { isDeleted: true } }),
        400,
        'invalid_request',
      );
      assert.deepEqual(upstream.slice(before), [], 'no call reached the service');
      await expectError(request('GET', '/elsewhere'), 404, 'not_found');
    });
  });
});
