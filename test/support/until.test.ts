import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { until } from './until.js';

/** Holds the process for `ms`, as a loaded machine does: no timer runs meanwhile. */
function stall(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

describe('until', () => {
  it('resolves once the check holds, and throws naming what it waited for when it never does', async () => {
    let looks = 0;
    await until(() => ++looks === 3, 'three looks', { everyMs: 1 });
    assert.equal(looks, 3);
    await assert.rejects(
      until(async () => false, 'nothing', { withinMs: 30, everyMs: 5 }),
      {
        message: 'timed out waiting for nothing',
      },
    );
  });

  it('does not fail a condition a timer made true in time when a stall held that timer past the deadline', async () => {
    let done = false;
    setTimeout(() => (done = true), 30);
    const waited = until(() => done, 'the timer', { withinMs: 60, everyMs: 5 });
    // The first look finds the timer not run; the stall takes the wait past its deadline; the timer, overdue by then,
    // runs before the next look.
    stall(150);
    await waited;
    assert.equal(done, true);
  });
});
