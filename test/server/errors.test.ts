import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BodyError } from '../../src/json-body.js';
import type { ErrorCode } from '../../src/protocol.js';
import {
  HttpError,
  errorOfEvent,
  fromServiceError,
  interrupted,
  notFound,
  restarting,
  runNotFound,
  toHttpError,
} from '../../src/server/errors.js';
import { StoreUnavailableError } from '../../src/server/store.js';
import { ServiceError } from '../../src/service/errors.js';
import type { ServiceErrorInit } from '../../src/service/errors.js';

/** What the browser is told of an error. */
const told = (error: HttpError) => ({
  status: error.status,
  code: error.code,
  retryable: error.retryable,
  retryAfter: error.retryAfter,
});

describe('HttpError', () => {
  it('is retryable for 429 and 5xx unless told otherwise, and writes the envelope with the request id', () => {
    assert.deepEqual(
      [400, 404, 429, 500, 503].map(status => new HttpError(status, 'invalid_request', 'm').retryable),
      [false, false, true, true, true],
    );
    assert.equal(new HttpError(503, 'store_unavailable', 'm', { retryable: false }).retryable, false);
    const error = new HttpError(429, 'rate_limited', 'Too many requests.', { retryAfter: 3 });
    assert.deepEqual(error.envelope('req-1'), {
      error: { code: 'rate_limited', message: 'Too many requests.', retryable: true, requestId: 'req-1' },
    });
    assert.deepEqual(error.headers, {});
  });
});

describe('what a failure of the service means for the browser', () => {
  const cases: [string, ServiceErrorInit, ReturnType<typeof told>][] = [
    [
      'a timeout',
      { status: 0, code: 'idle_timeout', message: 'm' },
      { status: 504, code: 'upstream_timeout', retryable: true, retryAfter: undefined },
    ],
    [
      'a connect timeout',
      { status: 0, code: 'connect_timeout', message: 'm' },
      { status: 504, code: 'upstream_timeout', retryable: true, retryAfter: undefined },
    ],
    [
      'a stream broken in the middle',
      { status: 0, code: 'stream_error', message: 'm' },
      { status: 503, code: 'interrupted', retryable: true, retryAfter: undefined },
    ],
    [
      'a stream ended cleanly before its end',
      { status: 0, code: 'incomplete', message: 'm' },
      { status: 503, code: 'interrupted', retryable: true, retryAfter: undefined },
    ],
    [
      'no connection',
      { status: 0, code: 'network_error', message: 'm' },
      { status: 503, code: 'upstream_unavailable', retryable: true, retryAfter: undefined },
    ],
    [
      'a 429 with Retry-After',
      { status: 429, code: 'rate_limited', message: 'm', retryAfter: 7 },
      { status: 503, code: 'upstream_unavailable', retryable: true, retryAfter: 7 },
    ],
    [
      'a 503',
      { status: 503, code: 'upstream_unavailable', message: 'm' },
      { status: 503, code: 'upstream_unavailable', retryable: true, retryAfter: undefined },
    ],
    [
      'a 500',
      { status: 500, code: 'upstream_error', message: 'm' },
      { status: 502, code: 'upstream_error', retryable: true, retryAfter: undefined },
    ],
    [
      'a refusal of our request',
      { status: 401, code: 'unauthorized', message: 'm' },
      { status: 502, code: 'upstream_error', retryable: false, retryAfter: undefined },
    ],
    [
      'a response it could not read',
      { status: 200, code: 'bad_response', message: 'm', retryable: true },
      { status: 502, code: 'upstream_error', retryable: true, retryAfter: undefined },
    ],
  ];
  for (const [name, init, expected] of cases) {
    it(`answers ${name} with ${expected.status} ${expected.code}`, () => {
      assert.deepEqual(told(fromServiceError(new ServiceError(init))), expected);
    });
  }

  it('never passes on what the service said, and keeps it as the cause', () => {
    const cause = new ServiceError({ status: 500, code: 'upstream_error', message: 'stack trace of the service' });
    const error = toHttpError(cause);
    assert.equal(error.message, 'The conversation service failed to answer.');
    assert.equal(error.cause, cause);
  });
});

describe('toHttpError', () => {
  it('keeps an HttpError as it is', () => {
    const error = notFound();
    assert.equal(toHttpError(error), error);
  });

  it("answers the store's absence with a 503 to retry in two seconds", () => {
    assert.deepEqual(told(toHttpError(new StoreUnavailableError('no connection'))), {
      status: 503,
      code: 'store_unavailable',
      retryable: true,
      retryAfter: 2,
    });
  });

  it("answers a body's refusal with its message, as 400 or 415, not to be retried", () => {
    const bad = toHttpError(new BodyError(400, 'message is required'));
    assert.deepEqual(
      [told(bad), bad.message],
      [{ status: 400, code: 'invalid_request', retryable: false, retryAfter: undefined }, 'message is required'],
    );
    assert.equal(toHttpError(new BodyError(415, 'JSON only')).code, 'unsupported_media_type');
  });

  it('answers anything else with a generic 500, keeping what was thrown as the cause', () => {
    for (const thrown of [new TypeError('x is undefined'), 'a string', undefined]) {
      const error = toHttpError(thrown);
      assert.deepEqual(told(error), { status: 500, code: 'internal_error', retryable: true, retryAfter: undefined });
      assert.equal(error.message, 'Something went wrong on our side.');
      assert.equal(error.cause, thrown);
    }
  });
});

describe('the errors a reply ends with', () => {
  it("gives a run's error event the status of its code", () => {
    const of = (code: string) => errorOfEvent({ code: code as ErrorCode, message: 'm', retryable: false }).status;
    assert.deepEqual(
      ['upstream_timeout', 'rate_limited', 'interrupted', 'conversation_not_found', 'upstream_error', 'unknown'].map(
        of,
      ),
      [504, 429, 503, 404, 502, 502],
    );
    const event = { code: 'upstream_unavailable' as const, message: 'Busy.', retryable: true };
    assert.deepEqual(errorOfEvent(event).envelope('r'), { error: { ...event, requestId: 'r' } });
  });

  it('names an interrupted reply, a restarting server and a missing run or conversation', () => {
    assert.deepEqual([interrupted(), restarting(), runNotFound(), notFound()].map(told), [
      { status: 503, code: 'interrupted', retryable: true, retryAfter: undefined },
      { status: 503, code: 'server_restarting', retryable: true, retryAfter: 1 },
      { status: 404, code: 'run_not_found', retryable: false, retryAfter: undefined },
      { status: 404, code: 'conversation_not_found', retryable: false, retryAfter: undefined },
    ]);
  });
});
