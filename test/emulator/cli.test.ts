import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ada, juniper } from '../support/service.js';

const cli = fileURLToPath(new URL('../../src/emulator/cli.ts', import.meta.url));
const args = (...rest: string[]) => ['--import', 'tsx', cli, ...rest];

/** Starts the CLI, waits for `count` lines of output, and stops it. */
async function firstLines(count: number, ...rest: string[]) {
  const child = spawn(process.execPath, args(...rest), { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only got: ${lines.join(' | ')}`)), 20_000);
      createInterface({ input: child.stdout! }).on('line', line => {
        lines.push(line);
        if (lines.length === count) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', code => reject(new Error(`exited with ${code} after: ${lines.join(' | ')}`)));
    });
    return { lines, child };
  } catch (error) {
    child.kill();
    throw error;
  }
}

describe('persona-chat-emulator CLI', () => {
  it('prints one line per listener, then one per persona, and serves on them', async () => {
    const { lines, child } = await firstLines(4, '--port', '0', '--api-key', 'cli-key', '--pace', '0');
    try {
      assert.match(lines[0]!, /^listening on http:\/\/127\.0\.0\.1:\d+$/);
      assert.match(lines[1]!, /^listening on http:\/\/127\.0\.0\.1:\d+$/);
      assert.deepEqual(lines.slice(2), [`persona ${ada.personaId} Ada`, `persona ${juniper.personaId} Juniper`]);
      const url = lines[0]!.split(' ')[2];
      const res = await fetch(`${url}/conversations`, { headers: { 'x-svc-api-key': 'cli-key' } });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { data: [], continuationToken: null });
    } finally {
      const exited = new Promise(resolve => child.once('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0, 'stops cleanly on SIGTERM');
    }
  });

  it('reads personas from a file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'persona-chat-'));
    const file = join(dir, 'personas.json');
    await writeFile(
      file,
      JSON.stringify({
        personas: [
          {
            personaId: '5b0c8f3e-2f0e-4b8a-9a55-0d6f1f3c2a11',
            personaVersionId: '0f4d2c1b-8e7a-4c3d-9b2a-1e0f9d8c7b6a',
            name: 'Rowan the Librarian',
            documents: [{ documentId: 'hours', title: 'Library hours', passages: ['The library opens at nine.'] }],
          },
        ],
      }),
    );
    const { lines, child } = await firstLines(3, '--port', '0', '--personas', file);
    child.kill('SIGTERM');
    assert.equal(lines[2], 'persona 5b0c8f3e-2f0e-4b8a-9a55-0d6f1f3c2a11 Rowan the Librarian');
  });

  it('documents every flag in --help', () => {
    const result = spawnSync(process.execPath, args('--help'), { encoding: 'utf8' });
    assert.equal(result.status, 0);
    for (const flag of [
      '--port',
      '--http2-port',
      '--host',
      '--api-key',
      '--api-key-header',
      '--personas',
      '--pace',
      '--routes',
      '--openai-base-url',
      '--openai-api-key',
      '--openai-model',
      '--help',
    ]) {
      assert.match(result.stdout, new RegExp(`${flag}\\b`), `--help mentions ${flag}`);
    }
  });

  for (const [name, flags, message] of [
    ['an unknown flag', ['--prot', '1'], /Unknown option '--prot'/],
    ['a bad port', ['--port', 'eighty'], /--port must be a port number/],
    ['a bad pace', ['--pace', 'fast'], /--pace must be/],
    ['a bad route form', ['--routes', 'b'], /--routes must be both, chat or continue/],
    ['a model URL without a model', ['--openai-base-url', 'http://127.0.0.1:1/v1'], /--openai-model is required/],
    ['a personas file that does not exist', ['--personas', '/nonexistent/personas.json'], /ENOENT/],
  ] as const) {
    it(`stops with exit code 2 and one line on ${name}`, () => {
      const result = spawnSync(process.execPath, args(...flags), { encoding: 'utf8', timeout: 20_000 });
      assert.equal(result.status, 2);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.trim().split('\n').length, 1);
    });
  }
});
