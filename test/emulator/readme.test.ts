import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The fenced blocks of one README section, with their language. */
async function walkthrough() {
  const readme = await readFile(`${root}README.md`, 'utf8');
  const start = readme.indexOf('## Walkthrough');
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map(m => ({ lang: m[1]!, code: m[2]! }));
}

describe('README walkthrough', () => {
  it('works word for word against the emulator (on ports the test picks)', async () => {
    const blocks = await walkthrough();
    assert.deepEqual(blocks[0], { lang: 'sh', code: 'npm run emulator\n' }, 'the walkthrough starts the emulator');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/emulator/cli.ts', '--port', '0', '--pace', '0'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const printed: string[] = [];
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', line => {
          if (printed.push(line) === 4) resolve();
        });
        child.once('exit', code => reject(new Error(`the emulator exited with ${code}`)));
      });
      const [h1, h2] = printed.map(line => line.match(/:(\d+)$/)?.[1]);
      // In one pass: one after the other, a port picked as 40110 to 40119 for the first would be replaced again.
      const withPorts = (text: string) => text.replace(/:401([01])(?!\d)/g, (_, last) => `:${last === '0' ? h1 : h2}`);

      const expectedOutput = blocks[1]!;
      assert.equal(expectedOutput.lang, 'text');
      assert.deepEqual(
        printed,
        withPorts(expectedOutput.code).trim().split('\n'),
        'the README shows what the emulator prints',
      );

      const commands = blocks.slice(2);
      assert.ok(commands.every(b => b.lang === 'sh'));
      const script = commands.map((b, i) => `echo '<<<${i}>>>'\n${withPorts(b.code)}`).join('\necho\n');
      // Not -e: the last curl reports the broken stream with a non-zero exit, as it should.
      const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: root, timeout: 60_000 }).catch(
        (error: { stdout: string }) => error,
      );
      const outputs = stdout.split(/<<<\d+>>>\n/).slice(1);
      assert.equal(outputs.length, 5);
      const [created, streamed, http2AndWhole, read, faultAndCut] = outputs;

      assert.match(created!.trim(), /^[0-9a-f-]{36}$/, 'the conversation id');
      assert.match(streamed!, /^data: \{"id":"chatcmpl-/);
      assert.match(streamed!, /"content":"business "/);
      assert.match(streamed!, /"finish_reason":"stop"/);
      assert.match(streamed!, /data: \[DONE\]\n\n\n$/, '[DONE] ends the stream');
      const [h2Lines, whole] = http2AndWhole!.split(/(?<=\n)(?=\{"id":"chatcmpl-[^"]+","object":"chat\.completion",)/);
      assert.match(h2Lines!, /"documentId":"rentals"/);
      assert.ok(
        h2Lines!
          .trim()
          .split('\n')
          .every(line => JSON.parse(line).object === 'chat.completion.chunk'),
      );
      assert.match(JSON.parse(whole!).choices[0].message.content, /lifetime warranty/);
      assert.equal(JSON.parse(read!).chatMessagesCount, 6);
      const faultSet = faultAndCut!.slice(0, faultAndCut!.indexOf('data: '));
      const cut = faultAndCut!.slice(faultSet.length);
      assert.deepEqual(JSON.parse(faultSet).cut, { afterChunks: 5, count: 1 });
      assert.equal(cut.trim().split('\n\n').length, 5, 'five chunks, then the stream breaks');
      assert.ok(!cut.includes('[DONE]'));
    } finally {
      child.kill('SIGTERM');
    }
  });
});
