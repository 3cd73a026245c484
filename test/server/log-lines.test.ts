import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineWriter } from '../../src/server/log-lines.js';

describe('lineWriter', () => {
  it('writes the lines of a moment in one write, in order, each on a line of its own', async () => {
    const writes: string[] = [];
    const log = lineWriter(text => writes.push(text), { flushMs: 20 });
    log.line('{"n":1}');
    log.line('{"n":2}');
    log.line('{"n":3}');
    assert.deepEqual(writes, [], 'nothing yet');
    await new Promise(resolve => setTimeout(resolve, 60));
    assert.deepEqual(writes, ['{"n":1}\n{"n":2}\n{"n":3}\n']);
    log.line('{"n":4}');
    await new Promise(resolve => setTimeout(resolve, 60));
    assert.deepEqual(writes.slice(1), ['{"n":4}\n'], 'a later line in a write of its own');
  });

  it('writes at once when enough waits, and on flush', () => {
    const writes: string[] = [];
    const log = lineWriter(text => writes.push(text), { flushMs: 60_000, maxChars: 10 });
    log.line('12345');
    assert.deepEqual(writes, []);
    log.line('67890');
    assert.deepEqual(writes, ['12345\n67890\n'], 'over maxChars');
    log.line('last');
    log.flush();
    log.flush();
    assert.deepEqual(writes, ['12345\n67890\n', 'last\n'], 'flushed once, nothing written twice');
  });
});
