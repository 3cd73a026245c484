/**
 * The browser bundle as the build makes it, built into a folder of the caller's: the suites that load the real files
 * (a launcher beside its chat, one copied alone, one of an earlier build) use it without touching `dist/`.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Builds the browser bundle under `out` as `npm run build:browser` does (build/browser.ts), and resolves with the
 * public folder, `out`/browser; rejects with what the build printed when it fails.
 */
export function buildBrowser(out) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'build/browser.ts', '--quiet'], {
      cwd: root,
      env: { ...process.env, PERSONA_CHAT_OUT: out },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', chunk => (output += chunk));
    child.stderr.on('data', chunk => (output += chunk));
    child.once('error', reject);
    child.once('close', code =>
      code === 0 ? resolve(`${out}/browser`) : reject(new Error(`build/browser.ts:\n${output}`)),
    );
  });
}

/** The name of the chat file in a public folder (`dist/browser` unless said), as its manifest names it. */
export async function builtChat(dir = `${root}/dist/browser`) {
  const manifest = await readFile(`${dir}/persona-chat-manifest.js`, 'utf8').catch(() => '');
  const name = /"([^"]+)"/.exec(manifest)?.[1];
  if (!name) throw new Error(`${dir}/persona-chat-manifest.js names no chat: run npm run build`);
  return name;
}
