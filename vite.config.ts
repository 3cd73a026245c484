import { readdir, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';
import { shortenProperties } from './build/properties.js';
import { minifyTemplates } from './build/templates.js';

/**
 * What every visitor's browser loads, in gzip bytes; the build fails above these. The launcher is what a page loads
 * before the chat is opened; the chat is loaded on intent, and a page that uses it loads both.
 */
const budgets = { launcher: 3 * 1024, chat: 33 * 1024 };

const gzipSize = (code: string) => gzipSync(code, { level: 9 }).length;

function sizeBudget(classic: boolean): Plugin {
  return {
    name: 'persona-chat-size-budget',
    async buildStart() {
      // The chunks of an earlier build (their names carry a hash) would otherwise pile up beside the new ones. The
      // classic build comes second and has no chunks.
      if (classic) return;
      const old = (await readdir('dist').catch(() => [])).filter(name => /^persona-chat-.*\.js(\.map)?$/.test(name));
      await Promise.all(old.map(name => rm(`dist/${name}`)));
    },
    generateBundle(_options, bundle) {
      const chunk = (name: string) => {
        const file = bundle[name];
        return file?.type === 'chunk' ? file : undefined;
      };
      /** A file and what it imports statically, transitively. */
      const closure = (name: string, into = new Set<string>()) => {
        if (into.has(name) || !chunk(name)) return into;
        into.add(name);
        for (const imported of chunk(name)!.imports) closure(imported, into);
        return into;
      };
      const entry = chunk('persona-chat.js');
      if (!entry) return;
      const launcher = closure(entry.fileName);
      const chatName = entry.dynamicImports.find(name => chunk(name)?.moduleIds.some(id => id.endsWith('/define.ts')));
      if (!chatName) this.error('the launcher does not load the chat');
      const all = closure(chatName!, new Set(launcher));
      const measure = (files: Set<string>) => [...files].reduce((sum, name) => sum + gzipSize(chunk(name)!.code), 0);
      for (const [what, files, budget] of [
        ['the launcher', launcher, budgets.launcher],
        ['the launcher and the chat', all, budgets.chat],
      ] as const) {
        const size = measure(files);
        const line = `${what} (${[...files].join(', ')}): ${(size / 1024).toFixed(1)} KB gzip (budget ${(budget / 1024).toFixed(1)} KB)`;
        if (size > budget) this.error(`${line}: over budget`);
        this.info(line);
      }
    },
  };
}

/**
 * Minifies the element's stylesheet (a Lit css`` literal): comments go, and so does the whitespace around braces,
 * semicolons, commas and colons' values. Whitespace elsewhere (a descendant combinator before `:hover`, the
 * spaces of `calc()`) can mean something, so it is kept, only collapsed. Numbers lose a leading zero (`.5em`),
 * attribute selectors the quotes around a value that is a plain name (`[theme=dark]`), colours their longer spelling
 * (`#fff`, `#0000` for transparent), and pseudo-elements the `*` before them, as CSS reads them the same.
 */
function minifyCss(): Plugin {
  return {
    name: 'persona-chat-minify-css',
    transform(code, id) {
      if (!id.endsWith('.styles.ts')) return undefined;
      // A tag, not the name in prose: a comment that quotes it in backticks would otherwise start a sheet.
      return code.replace(/(?<![\w`])css`([^`]*)`/g, (_, sheet: string) => {
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
        return `css\`${minified}\``;
      });
    },
  };
}

// The browser bundle of <persona-chat>: the launcher (`persona-chat.js`) with the chat (every dependency inside) and
// a small chunk per language beside it; and, with `--mode classic`, the classic-script build, one file holding all.
export default defineConfig(({ mode }) => {
  const classic = mode === 'classic';
  return {
    plugins: [shortenProperties(), minifyCss(), minifyTemplates(), sizeBudget(classic)],
    build: {
      target: 'es2022',
      sourcemap: true,
      emptyOutDir: false,
      outDir: 'dist',
      minify: true,
      // Lib mode keeps whitespace in ES output for downstream bundlers; these files go to browsers as they are.
      rolldownOptions: {
        // The chat chunk takes what it shares with the launcher (the launcher's styles) from the launcher file.
        preserveEntrySignatures: 'allow-extension',
        // Pure annotations are hints for a bundler; nothing bundles these files again, and the chat has 24 of them.
        output: {
          minify: true,
          comments: { annotation: false },
          chunkFileNames: 'persona-chat-[name]-[hash].js',
        },
      },
      lib: classic
        ? {
            entry: 'src/element/define.ts',
            name: 'PersonaChat',
            formats: ['iife'],
            fileName: () => 'persona-chat.iife.js',
          }
        : { entry: 'src/element/launcher.ts', formats: ['es'], fileName: () => 'persona-chat.js' },
    },
  };
});
