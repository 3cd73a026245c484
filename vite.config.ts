import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import MagicString from 'magic-string';
import { defineConfig } from 'vite';
import type { Plugin, UserConfig } from 'vite';
import { shortenProperties } from './build/properties.js';
import { minifyTemplates } from './build/templates.js';
import { compress } from './build/compress.js';

/** Where the builds go: `dist/`, unless PERSONA_CHAT_OUT says elsewhere (a test's own folder). */
const output = process.env.PERSONA_CHAT_OUT || 'dist';
/** The public folder: everything a browser needs, and nothing else. */
export const browserDir = `${output}/browser`;
/** The same files with their source maps, for a site that wants them. */
export const debugDir = `${output}/browser-debug`;
/** The module, beside the launcher, that names the chat file of the build it belongs to. */
export const manifestFile = 'persona-chat-manifest.js';

/**
 * What every visitor's browser loads, in gzip bytes; the build fails above these. The launcher is what a page loads
 * before the chat is opened; the chat is loaded on intent, and a page that uses it loads both.
 */
const budgets = { launcher: 3 * 1024, chat: 34.25 * 1024 };

const gzipSize = (code: string | Uint8Array) => gzipSync(code, { level: 9 }).length;

/** A file as the public folder ships it: without the comment that names its source map. */
const shipped = (code: string) => code.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n');

/** The chat file the build in `dir` made, as its manifest names it. */
async function chatFileIn(dir: string): Promise<string> {
  const manifest = await readFile(`${dir}/${manifestFile}`, 'utf8').catch(() => '');
  const name = /"([^"]+)"/.exec(manifest)?.[1];
  if (!name) throw new Error(`${dir}/${manifestFile} names no chat: the chat is built first (vite build --mode chat)`);
  return name;
}

/**
 * The chat's build: `define.ts` and everything it needs in one file whose name carries its hash, its lazy chunks (the
 * history view, one per language) beside it, and the manifest that names it. The chat imports nothing from the
 * launcher, so that a launcher of another build (cached before a redeploy) can load it.
 */
function chatFiles(): Plugin {
  return {
    name: 'persona-chat-chat-files',
    async buildStart() {
      // The files of an earlier build (their names carry a hash) would otherwise pile up beside the new ones; and
      // those of a build from before the public folder, at the top of the output, would be packed with it.
      for (const dir of [browserDir, debugDir, output]) {
        const old = (await readdir(dir).catch(() => [])).filter(name => name.startsWith('persona-chat'));
        await Promise.all(old.map(name => rm(`${dir}/${name}`)));
      }
    },
    generateBundle(_options, bundle) {
      const chat = Object.values(bundle).find(file => file.type === 'chunk' && file.isEntry);
      if (!chat) return this.error('the chat build made no entry');
      this.emitFile({
        type: 'asset',
        fileName: manifestFile,
        source: `export default ${JSON.stringify(chat.fileName)};\n`,
      });
    },
  };
}

/** The launcher's build: the budgets of what a visitor loads, the launcher and the chat it names. */
function launcherFiles(chat: string): Plugin {
  return {
    name: 'persona-chat-launcher-files',
    async generateBundle(_options, bundle) {
      const launcher = bundle['persona-chat.js'];
      if (launcher?.type !== 'chunk') return this.error('the launcher build made no persona-chat.js');
      // The chat as the public folder serves it (its build wrote it there, without the comment naming its map).
      const chatCode = await readFile(`${browserDir}/${chat}`, 'utf8');
      if (/^import\b|\bfrom"\.\//m.test(chatCode))
        return this.error(`${chat} imports another file: it must stand alone`);
      const sizes = [gzipSize(shipped(launcher.code)), gzipSize(chatCode)];
      for (const [what, size, budget] of [
        [`the launcher (persona-chat.js)`, sizes[0]!, budgets.launcher],
        [`the launcher and the chat (persona-chat.js, ${chat})`, sizes[0]! + sizes[1]!, budgets.chat],
      ] as const) {
        // In bytes: a tenth of a kilobyte would hide a build a few bytes over.
        const line = `${what}: ${size} bytes gzip (budget ${budget})`;
        if (size > budget) this.error(`${line}: over budget`);
        this.info(line);
      }
    },
  };
}

/**
 * Each build writes to the debug folder, with source maps; the public folder gets the same files without them (and
 * without the comment that points at them). Their names do not change: a hash is of the code alone.
 */
function publicCopy(): Plugin {
  return {
    name: 'persona-chat-public-copy',
    async writeBundle(_options, bundle) {
      await mkdir(browserDir, { recursive: true });
      for (const name of Object.keys(bundle).filter(name => !name.endsWith('.map'))) {
        const code = await readFile(`${debugDir}/${name}`, 'utf8');
        await writeFile(`${browserDir}/${name}`, shipped(code));
      }
    },
  };
}

/**
 * Minifies the element's stylesheet (a Lit css`` literal): comments go, and so does the whitespace around braces,
 * semicolons, commas and colons' values. Whitespace elsewhere (a descendant combinator before `:hover`, the
 * spaces of `calc()`) can mean something, so it is kept, only collapsed. Numbers lose a leading zero (`.5em`),
 * attribute selectors the quotes around a value that is a plain name (`[theme=dark]`), colours their longer spelling
 * (`#fff`, `#0000` for transparent), and pseudo-elements the `*` before them, as CSS reads them the same. The sheet
 * becomes a plain template literal, without its `css` tag (String.raw), so that a bundle leaves out a sheet it never
 * reads (the launcher's notice, in the chat). Each sheet is replaced whole: the source map sends it to where it
 * started, and the code around it to where it was.
 */
function minifyCss(): Plugin {
  return {
    name: 'persona-chat-minify-css',
    transform(code, id) {
      if (!id.endsWith('.styles.ts')) return undefined;
      const out = new MagicString(code);
      // A tag, not the name in prose: a comment that quotes it in backticks would otherwise start a sheet.
      for (const match of code.matchAll(/(?<![\w`])css`([^`]*)`/g)) {
        const sheet = match[1]!;
        const minified = sheet
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/\s+/g, ' ')
          .replace(/\s*([{};,])\s*/g, '$1')
          .replace(/:\s+/g, ':')
          .replace(/;}/g, '}')
          .replace(/([\s:,(])0\.(\d)/g, '$1.$2')
          .replace(/=(['"])([a-z][\w-]*)\1\]/gi, '=$2]')
          .replace(/#([\da-f])\1([\da-f])\2([\da-f])\3\b/gi, '#$1$2$3')
          .replace(/\btransparent\b/g, '#0000')
          .replace(/\*::/g, '::')
          .trim();
        const start = match.index + 'css`'.length;
        // The tag goes: a plain template literal (its backslashes escaped) reads as String.raw does, and the bundler
        // knows it has no effect, so a sheet that no code of a bundle reads is left out of it.
        out.remove(match.index, start - 1);
        out.overwrite(start, start + sheet.length, minified.replace(/\\/g, '\\\\'));
      }
      // The tag itself, now unread: reading a global's property is an effect to the bundler, which would keep it.
      for (const match of code.matchAll(/^const css = String\.raw;\n/gm)) {
        out.remove(match.index, match.index + match[0].length);
      }
      // A use of the tag that is not a sheet (a call) would now read a name that is gone.
      if (/(?<![\w`.$])css\s*[(`]/.test(out.toString()))
        return this.error(`${id}: a use of css the build cannot rewrite`);
      return { code: out.toString(), map: out.generateMap({ hires: true }) };
    },
  };
}

/**
 * The browser bundle of <persona-chat>, in three builds, each into `dist/browser/` (and `dist/browser-debug/`, with
 * source maps): `--mode chat`, the chat with its lazy chunks and the manifest naming it; then the launcher
 * (`persona-chat.js`), which loads that chat from beside it; and `--mode classic`, the classic-script build, one file
 * holding all (`persona-chat.iife.js`).
 */
export default defineConfig(async ({ mode }): Promise<UserConfig> => {
  const build = mode === 'chat' ? 'chat' : mode === 'classic' ? 'classic' : 'launcher';
  const chat = build === 'launcher' ? await chatFileIn(debugDir) : '';
  return {
    // The launcher loads the chat by the name of its file.
    define: build === 'launcher' ? { __PERSONA_CHAT_CHAT__: JSON.stringify(chat) } : {},
    plugins: [
      compress(),
      shortenProperties(),
      minifyCss(),
      minifyTemplates(),
      ...(build === 'chat' ? [chatFiles()] : build === 'launcher' ? [launcherFiles(chat)] : []),
      publicCopy(),
    ],
    build: {
      target: 'es2022',
      sourcemap: true,
      emptyOutDir: false,
      outDir: debugDir,
      minify: true,
      // Lib mode keeps whitespace in ES output for downstream bundlers; these files go to browsers as they are.
      rolldownOptions: {
        // terser's passes take seconds over a whole bundle, as they are meant to: not a warning.
        checks: { bundlerTimings: false },
        // Pure annotations are hints for a bundler; nothing bundles these files again, and the chat has 24 of them.
        output: {
          minify: true,
          comments: { annotation: false },
          // Six characters of hash (36 bits) tell the versions of a file apart as well as eight: the chat names each
          // of its chunks, and the launcher the chat, so every character is paid for in what a visitor loads.
          chunkFileNames: 'persona-chat-[name]-[hash:6].js',
        },
      },
      lib:
        build === 'classic'
          ? {
              entry: 'src/element/define.ts',
              name: 'PersonaChat',
              formats: ['iife'],
              fileName: () => 'persona-chat.iife.js',
            }
          : build === 'chat'
            ? { entry: 'src/element/define.ts', formats: ['es'], fileName: () => 'persona-chat-define-[hash:6].js' }
            : { entry: 'src/element/launcher.ts', formats: ['es'], fileName: () => 'persona-chat.js' },
    },
  };
});
