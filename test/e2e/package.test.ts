import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The package as a user gets it: `npm pack` (which builds), then the tarball installed into an empty folder, with
 * every entry imported and both programs run. Dependencies come from npm's cache when it has them.
 */
describe('the packed package', { timeout: 300_000 }, () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'persona-chat-pack-'));
    const { stdout } = await run(npm, ['pack', '--pack-destination', dir, '--silent'], {
      cwd: root,
      maxBuffer: 1 << 24,
    });
    const tarball = join(dir, stdout.trim().split('\n').at(-1)!);
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await run(npm, ['install', tarball, '@types/node@20', '--prefer-offline', '--no-audit', '--no-fund', '--silent'], {
      cwd: dir,
      maxBuffer: 1 << 24,
    });
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('ships only what users need', async () => {
    const manifest = JSON.parse(await readFile(join(dir, 'node_modules/persona-chat/package.json'), 'utf8'));
    assert.equal(manifest.customElements, 'custom-elements.json');
    const files = (await run('find', ['.', '-type', 'f'], { cwd: join(dir, 'node_modules/persona-chat') })).stdout;
    // The public folder: what a browser needs, and nothing else.
    const browser = files.split('\n').filter(file => file.startsWith('./dist/browser/'));
    for (const file of ['persona-chat.js', 'persona-chat.iife.js', 'persona-chat-manifest.js']) {
      assert.ok(browser.includes(`./dist/browser/${file}`), `${file} ships in dist/browser`);
    }
    for (const chunk of ['define', 'ar', 'ja', 'history']) {
      assert.ok(
        browser.some(file => new RegExp(`^\\./dist/browser/persona-chat-${chunk}-[\\w-]+\\.js$`).test(file)),
        `the ${chunk} chunk ships in dist/browser`,
      );
    }
    assert.deepEqual(
      browser.filter(file => !/^\.\/dist\/browser\/persona-chat[\w.-]*\.js$/.test(file)),
      [],
      'dist/browser holds the browser bundle alone: no source maps, declarations or server code',
    );
    const debug = files.split('\n').filter(file => file.startsWith('./dist/browser-debug/'));
    for (const file of browser) {
      const name = file.slice('./dist/browser/'.length);
      assert.ok(debug.includes(`./dist/browser-debug/${name}`), `${name} ships in dist/browser-debug too`);
      if (name !== 'persona-chat-manifest.js') {
        assert.ok(debug.includes(`./dist/browser-debug/${name}.map`), `${name} has its source map there`);
      }
    }
    assert.match(files, /\.\/custom-elements\.json\n/);
    for (const file of ['LICENSE', 'CHANGELOG.md', 'README.md'])
      assert.match(files, new RegExp(`\\./${file}\\n`), `${file} ships`);
    // What npm publish would upload (the same list as the tarball's): the build, the manifest, the docs.
    const unexpected = files
      .split('\n')
      .filter(Boolean)
      .filter(
        file => !/^\.\/(dist\/|custom-elements\.json$|README\.md$|CHANGELOG\.md$|LICENSE$|package\.json$)/.test(file),
      );
    assert.deepEqual(unexpected, [], 'nothing but the build, the manifest and the docs');
    assert.doesNotMatch(files, /\.test\.|\.\/(src|test|demo|examples|build)\//);
    const elements = JSON.parse(await readFile(join(dir, 'node_modules/persona-chat/custom-elements.json'), 'utf8'));
    const declaration = elements.modules
      .flatMap((m: { declarations?: object[] }) => m.declarations ?? [])
      .find((d: { tagName?: string }) => d.tagName);
    assert.equal(declaration.tagName, 'persona-chat');
    for (const { path } of elements.modules as { path: string }[]) {
      assert.match(files, new RegExp(`\\./${path.replace(/[.]/g, '\\.')}\\n`), `the manifest's ${path} ships`);
    }
  });

  it('imports every Node entry, and runs both programs', async () => {
    const script = [
      "const service = await import('persona-chat/service');",
      "const server = await import('persona-chat/server');",
      "const serverNode = await import('persona-chat/server/node');",
      "const serverRedis = await import('persona-chat/server/redis');",
      "const emulator = await import('persona-chat/emulator');",
      "const emulatorNode = await import('persona-chat/emulator/node');",
      "const element = await import('persona-chat');",
      'console.log(JSON.stringify([typeof service.ServiceClient, typeof server.createBackend, typeof serverNode.serveBackend,',
      '  typeof serverRedis.RedisStore, typeof emulator.createEmulator, typeof emulatorNode.startEmulator,',
      '  typeof element.PersonaChat]));',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: dir });
    assert.deepEqual(JSON.parse(stdout), Array(7).fill('function'));
    // The public folder's files, by the package's names for them.
    const files = [
      'persona-chat/persona-chat.js',
      'persona-chat/persona-chat.iife.js',
      'persona-chat/browser/persona-chat-manifest.js',
    ];
    const resolved = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `console.log(JSON.stringify(${JSON.stringify(files)}.map(f => import.meta.resolve(f))))`,
      ],
      { cwd: dir },
    );
    for (const url of JSON.parse(resolved.stdout) as string[]) {
      assert.match(url, /\/node_modules\/persona-chat\/dist\/browser\/persona-chat[\w.-]*\.js$/);
      await readFile(fileURLToPath(url));
    }
    for (const bin of ['persona-chat-server', 'persona-chat-emulator']) {
      const help = await run(join(dir, 'node_modules/.bin', bin), ['--help'], { cwd: dir });
      assert.match(help.stdout, /^Usage: /, bin);
    }
  });

  for (const resolution of ['bundler', 'node16'] as const) {
    it(`has types that resolve under moduleResolution: ${resolution}`, async () => {
      await writeFile(
        join(dir, 'check.ts'),
        [
          "import { PersonaChat, PersonaChatMessageEvent } from 'persona-chat';",
          "import 'persona-chat/define';",
          "import { ServiceClient } from 'persona-chat/service';",
          "import { createBackend } from 'persona-chat/server';",
          "import type { BackendConfig, SessionResponse } from 'persona-chat/server';",
          "import { nodeMiddleware } from 'persona-chat/server/node';",
          "import { createEmulator } from 'persona-chat/emulator';",
          "import { startEmulator } from 'persona-chat/emulator/node';",
          'const config: BackendConfig = { serviceUrl: "http://x", apiKey: "k", personaId: "p", tokenSecret: "s", allowedOrigins: [] };',
          'const session: SessionResponse | undefined = undefined;',
          'const el: PersonaChat = document.createElement("persona-chat");',
          'el.addEventListener("persona-chat-message", (e: PersonaChatMessageEvent) => e.content.length);',
          'export const used = [ServiceClient, createBackend, nodeMiddleware, createEmulator, startEmulator, config, session];',
          '',
        ].join('\n'),
      );
      const tsconfig = {
        compilerOptions: {
          target: 'ES2022',
          module: resolution === 'bundler' ? 'ESNext' : 'Node16',
          moduleResolution: resolution,
          strict: true,
          noEmit: true,
          lib: ['ES2023', 'DOM', 'DOM.Iterable'],
          types: ['node'],
          skipLibCheck: true,
        },
        files: ['check.ts'],
      };
      await writeFile(join(dir, `tsconfig.${resolution}.json`), JSON.stringify(tsconfig));
      const tsc = join(root, 'node_modules/typescript/bin/tsc');
      const result = await run(process.execPath, [tsc, '-p', `tsconfig.${resolution}.json`], { cwd: dir }).catch(
        (error: { stdout: string }) => error,
      );
      assert.equal(result.stdout, '', result.stdout);
    });
  }
});
