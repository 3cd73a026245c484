import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceError, codeForStatus, isRetryableStatus, redact } from '../../src/service/errors.js';

describe('the service client’s errors', () => {
  it('count no response, 408, 429 and every 5xx as retryable, and nothing else', () => {
    assert.deepEqual([0, 400, 401, 404, 408, 409, 429, 500, 502, 503, 504].map(isRetryableStatus), [
      true,
      false,
      false,
      false,
      true,
      false,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('name a code for every status, by its class where it has none of its own', () => {
    const statuses = [400, 401, 403, 404, 409, 413, 418, 422, 429, 500, 502, 503, 504, 507];
    assert.deepEqual(Object.fromEntries(statuses.map(status => [status, codeForStatus(status)])), {
      400: 'invalid_request',
      401: 'unauthorized',
      403: 'forbidden',
      404: 'not_found',
      409: 'conflict',
      413: 'payload_too_large',
      418: 'invalid_request',
      422: 'invalid_request',
      429: 'rate_limited',
      500: 'upstream_error',
      502: 'upstream_error',
      503: 'upstream_unavailable',
      504: 'upstream_error',
      507: 'upstream_error',
    });
  });

  it('take their retryability from the status unless told, and serialize as what they say, without a stack', () => {
    const busy = new ServiceError({
      status: 503,
      code: 'upstream_unavailable',
      message: 'The service is busy.',
      requestId: 'req-1',
      retryAfter: 5,
    });
    assert.ok(busy instanceof Error);
    assert.equal(busy.name, 'ServiceError');
    assert.deepEqual(JSON.parse(JSON.stringify(busy)), {
      status: 503,
      code: 'upstream_unavailable',
      message: 'The service is busy.',
      requestId: 'req-1',
      retryable: true,
      retryAfter: 5,
    });
    assert.equal(new ServiceError({ status: 400, code: 'invalid_request', message: 'm' }).retryable, false);
    assert.equal(
      new ServiceError({ status: 200, code: 'bad_response', message: 'm', retryable: true }).retryable,
      true,
    );
    assert.equal(
      new ServiceError({ status: 500, code: 'upstream_error', message: 'm', retryable: false }).retryable,
      false,
    );
  });

  it('redact every occurrence of every secret, leaving the rest of the text', () => {
    assert.equal(
      redact('key sk-one, again sk-one, then sk-two', ['sk-one', '', 'sk-two']),
      'key [redacted], again [redacted], then [redacted]',
    );
    assert.equal(redact('nothing secret', ['sk-one']), 'nothing secret');
  });
});
