import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';

const cliSupport = new URL('../src/cli-support.ts', import.meta.url).href;
const args = (code: string) => ['--import', 'tsx', '--input-type=module', '-e', code];
/** Programs that never stopped would otherwise hold the suite until they give up on their own. */
const stuck = { timeout: 60_000 };

/**
 * A program that stops on signals as the command-line programs do, with a `close` that says when it starts and then
 * either ends or never does; it says "ready" once it listens for signals.
 */
function program({ closeEnds, giveUpMs }: { closeEnds: boolean; giveUpMs: number }) {
  const child = spawn(
    process.execPath,
    args(`
      import { stopOnSignals } from ${JSON.stringify(cliSupport)};
      stopOnSignals(async signal => {
        process.stdout.write('closing on ' + signal + '\\n');
        ${closeEnds ? '' : 'await new Promise(() => {});'}
      }, ${giveUpMs});
      setInterval(() => {}, 1000);
      process.stdout.write('ready\\n');
    `),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const line = async () => (await lines.next()).value as string | undefined;
  return { child, line, exited: once(child, 'exit') };
}

describe('what the command-line programs share', () => {
  it('stops with the program’s name and the message on stderr, and exit code 2', () => {
    const result = spawnSync(
      process.execPath,
      args(`import { fail } from ${JSON.stringify(cliSupport)}; fail('persona-chat-x', '--port must be a number');`),
      { encoding: 'utf8' },
    );
    assert.equal(result.status, 2);
    assert.equal(result.stderr, 'persona-chat-x: --port must be a number\n');
    assert.equal(result.stdout, '');
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`closes on ${signal}, then exits 0`, stuck, async () => {
      const { child, line, exited } = program({ closeEnds: true, giveUpMs: 600_000 });
      try {
        assert.equal(await line(), 'ready');
        child.kill(signal);
        assert.equal(await line(), `closing on ${signal}`);
        assert.deepEqual(await exited, [0, null]);
      } finally {
        child.kill('SIGKILL');
      }
    });
  }

  it('exits 0 at a second signal while the close goes on', stuck, async () => {
    const { child, line, exited } = program({ closeEnds: false, giveUpMs: 600_000 });
    try {
      assert.equal(await line(), 'ready');
      child.kill('SIGTERM');
      assert.equal(await line(), 'closing on SIGTERM');
      child.kill('SIGINT');
      assert.deepEqual(await exited, [0, null]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('gives up on a close that never ends, and exits 0', stuck, async () => {
    const { child, line, exited } = program({ closeEnds: false, giveUpMs: 50 });
    try {
      assert.equal(await line(), 'ready');
      child.kill('SIGTERM');
      assert.equal(await line(), 'closing on SIGTERM');
      assert.deepEqual(await exited, [0, null]);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
