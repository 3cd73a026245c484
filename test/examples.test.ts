import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';

/** The files of examples/ that the README shows, each in a fence of its language. */
const shown = [
  ['examples/next/app/help-chat.tsx', 'tsx'],
  ['examples/vite-vue/src/HelpChat.vue', 'vue'],
  ['examples/vite-vue/vite.config.ts', 'ts'],
  ['examples/express/server.ts', 'ts'],
  ['examples/next/app/persona-chat/[...path]/route.ts', 'ts'],
  ['examples/worker/src/index.ts', 'ts'],
  ['examples/worker/wrangler.toml', 'toml'],
] as const;

describe('the README', () => {
  it('shows the integration examples exactly as the integration suite runs them', async () => {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    for (const [file, fence] of shown) {
      const code = await readFile(new URL(`../${file}`, import.meta.url), 'utf8');
      assert.ok(readme.includes('```' + fence + '\n' + code + '```'), `README shows ${file} as it is`);
    }
  });
});
