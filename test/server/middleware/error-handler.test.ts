import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import type { ErrorEnvelope } from '../../../src/protocol.js';
import type { Env } from '../../../src/server/env.js';
import { HttpError } from '../../../src/server/errors.js';
import { errorHandlers } from '../../../src/server/middleware/error-handler.js';
import { ServiceError } from '../../../src/service/errors.js';

const secret = 'sk-a-secret-that-must-not-be-logged';

/** One route that throws what the test gives, the errors rendered as the backend's; notes what the log line gets. */
function app(thrown: () => unknown, controller = new AbortController()) {
  const notes: Env['Variables']['failure'][] = [];
  const handlers = errorHandlers([secret]);
  const routes = new Hono<Env>()
    .use(requestId())
    .use(async (c, next) => {
      await next();
      notes.push(c.get('failure'));
    })
    .get('/', () => {
      throw thrown();
    });
  routes.onError(handlers.onError).notFound(handlers.notFound);
  const fetch = (path = '/') => routes.fetch(new Request(`http://backend.test${path}`, { signal: controller.signal }));
  return { fetch, notes };
}

describe('errorHandlers', () => {
  it('renders an HttpError as its envelope, with its headers and Retry-After in whole seconds', async () => {
    for (const [retryAfter, header] of [
      [0.2, '1'],
      [2.5, '3'],
    ] as const) {
      const { fetch, notes } = app(
        () => new HttpError(429, 'rate_limited', 'Too many requests.', { retryAfter, headers: { 'x-extra': 'y' } }),
      );
      const res = await fetch();
      assert.equal(res.status, 429);
      assert.equal(res.headers.get('retry-after'), header);
      assert.equal(res.headers.get('x-extra'), 'y');
      assert.deepEqual(await res.json(), {
        error: {
          code: 'rate_limited',
          message: 'Too many requests.',
          retryable: true,
          requestId: res.headers.get('x-request-id'),
        },
      });
      assert.deepEqual(notes, [{ code: 'rate_limited' }], 'the code only, for a refusal');
    }
  });

  it('answers anything else as a 500 that says nothing of it, and notes its cause without secrets', async () => {
    const { fetch, notes } = app(() => new TypeError(`the call with ${secret} failed`));
    const res = await fetch();
    const text = await res.text();
    assert.equal(res.status, 500);
    assert.equal((JSON.parse(text) as ErrorEnvelope).error.message, 'Something went wrong on our side.');
    assert.ok(!text.includes('the call'), 'nothing of what was thrown');
    assert.deepEqual(notes, [{ code: 'internal_error', detail: 'TypeError: the call with [redacted] failed' }]);
  });

  it("notes the service's failure behind a 5xx, at most 500 characters of it", async () => {
    const { fetch, notes } = app(
      () => new ServiceError({ status: 500, code: 'upstream_error', message: `${secret} ${'x'.repeat(1000)}` }),
    );
    assert.equal((await fetch()).status, 502);
    assert.equal(notes[0]!.code, 'upstream_error');
    assert.match(notes[0]!.detail!, /^ServiceError: \[redacted\] x+$/);
    assert.equal(notes[0]!.detail!.length, 500);
  });

  it('answers a route that does not exist with a 404 envelope', async () => {
    const { fetch } = app(() => new Error('never thrown'));
    const res = await fetch('/nowhere');
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as ErrorEnvelope).error.code, 'not_found');
  });

  it('answers a request whose client went away with an empty 499, noted as client_closed', async () => {
    const controller = new AbortController();
    const { fetch, notes } = app(() => {
      controller.abort();
      return new Error('the read failed because the client left');
    }, controller);
    const res = await fetch();
    assert.equal(res.status, 499);
    assert.equal(await res.text(), '');
    assert.deepEqual(notes, [{ code: 'client_closed' }], 'no failure of ours');
  });
});
