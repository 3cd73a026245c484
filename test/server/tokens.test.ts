import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Tokens } from '../../src/server/tokens.js';

const secret = new TextEncoder().encode('a-token-secret-of-more-than-thirty-two-bytes');

describe('Tokens', () => {
  it('verifies a token once and then knows it, until it expires', async () => {
    const tokens = new Tokens(secret, { ttlSeconds: 600, toleranceSeconds: 30 });
    const now = Date.now();
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: 'p1' }, now);
    assert.deepEqual(await tokens.verify(token, now), { sub: 'anon_a', personaId: 'p1' });
    const again = await tokens.verify(token, now + 1000);
    assert.deepEqual(again, { sub: 'anon_a', personaId: 'p1' });
    assert.ok(Object.isFrozen(again), 'the claims one request gets cannot be changed for the next');
    await assert.rejects(tokens.verify(token, now + 700_000), { code: 'token_expired' });
  });

  it('refuses a token that differs from a known one in its signature or its payload', async () => {
    const tokens = new Tokens(secret);
    const now = Date.now();
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: null }, now);
    await tokens.verify(token, now);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flip = (text: string) => text.slice(0, -2) + (text.at(-2) === 'A' ? 'B' : 'A') + text.at(-1);
    await assert.rejects(tokens.verify(`${header}.${payload}.${flip(signature)}`, now), { code: 'token_invalid' });
    const other = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'anon_b' }),
    );
    await assert.rejects(tokens.verify(`${header}.${other.toString('base64url')}.${signature}`, now), {
      code: 'token_invalid',
    });
  });

  it('works the same without remembering tokens', async () => {
    const tokens = new Tokens(secret, { cacheSize: 0 });
    const now = Date.now();
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: null }, now);
    assert.deepEqual(await tokens.verify(token, now), { sub: 'anon_a', personaId: null });
    assert.deepEqual(await tokens.verify(token, now + 1000), { sub: 'anon_a', personaId: null });
    await assert.rejects(tokens.verify(token, now + 700_000), { code: 'token_expired' });
  });
});
