import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterNoKeyLeaks, setup } from '../support/backend.js';

describe('limits', () => {
  afterNoKeyLeaks();

  it('warns once when a proxy forwards addresses that no setting trusts', async t => {
    const warn = t.mock.method(console, 'warn', () => {});
    const { session } = setup();
    await session({}, { 'x-forwarded-for': '203.0.113.7' });
    await session({}, { 'x-forwarded-for': '203.0.113.8' });
    assert.equal(warn.mock.callCount(), 1);
    assert.match(String(warn.mock.calls[0]!.arguments[0]), /X-Forwarded-For.*--trust-proxy/s);
  });
});
