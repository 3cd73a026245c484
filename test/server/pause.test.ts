import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pause } from '../../src/server/pause.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Whether `promise` has settled, and how, once the work queued so far has run. */
async function state(promise: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  let seen: 'pending' | 'resolved' | 'rejected' = 'pending';
  promise.then(
    () => (seen = 'resolved'),
    () => (seen = 'rejected'),
  );
  await new Promise(resolve => setImmediate(resolve));
  return seen;
}

describe('pause', () => {
  it('resolves once its time has passed, not before', async t => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const paused = pause(1000);
    t.mock.timers.tick(999);
    assert.equal(await state(paused), 'pending');
    t.mock.timers.tick(1);
    assert.equal(await state(paused), 'resolved');
  });

  it('rejects with the signal’s reason when it aborts, at once if it already has', async t => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const controller = new AbortController();
    const paused = pause(60_000, controller.signal);
    controller.abort(new Error('stopped'));
    await assert.rejects(paused, /stopped/);
    await assert.rejects(pause(1, controller.signal), /stopped/);
  });

  it('leaves the signal as it found it once it has resolved', async t => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = (...args: Parameters<typeof add>) => (listeners++, add(...args));
    controller.signal.removeEventListener = (...args: Parameters<typeof remove>) => (listeners--, remove(...args));
    const paused = pause(10, controller.signal);
    assert.equal(listeners, 1);
    t.mock.timers.tick(10);
    await paused;
    assert.equal(listeners, 0);
  });

  it('holds the process open unless told not to', async () => {
    const run = async (options: string) => {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          `import { pause } from './src/server/pause.ts'; ` +
            `pause(${options ? 60_000 : 50}, undefined, ${options || '{}'}).then(() => console.log('paused'));`,
        ],
        { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', piece => (out += piece));
      const [code] = await once(child, 'exit');
      return { code, out };
    };
    // A minute's pause that does not hold the process: it exits without it, at once.
    assert.deepEqual(await run('{ unref: true }'), { code: 0, out: '' });
    // One that does: the process waits for it.
    assert.deepEqual(await run(''), { code: 0, out: 'paused\n' });
  });
});
