import { readdir, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';

/** Every byte of the element ships to every visitor: the build fails above this gzip size. */
const budgetBytes = 41 * 1024;

function sizeBudget(): Plugin {
  // Each format is a build of its own in one process: only the first clears, or the next would remove its chunks.
  let cleared = false;
  return {
    name: 'persona-chat-size-budget',
    async buildStart() {
      if (cleared) return;
      cleared = true;
      // The chunks of an earlier build (their names carry a hash) would otherwise pile up beside the new ones.
      const old = (await readdir('dist').catch(() => [])).filter(name => /^persona-chat-.*\.js(\.map)?$/.test(name));
      await Promise.all(old.map(name => rm(`dist/${name}`)));
    },
    generateBundle(_options, bundle) {
      const entry = bundle['persona-chat.js'];
      if (entry?.type !== 'chunk') return;
      // What a page loads before anything else: the file and whatever it imports statically.
      const files = [entry, ...entry.imports.map(name => bundle[name])].filter(file => file?.type === 'chunk');
      const code = files.map(file => file.code).join('');
      const gzip = files.reduce((sum, file) => sum + gzipSync(file.code, { level: 9 }).length, 0);
      const line = `persona-chat.js${files.length > 1 ? ` and ${files.length - 1} chunks it imports` : ''}: ${(code.length / 1024).toFixed(1)} KB, ${(gzip / 1024).toFixed(1)} KB gzip (budget ${budgetBytes / 1024} KB)`;
      if (gzip > budgetBytes) this.error(`${line}: over budget`);
      this.info(line);
    },
  };
}

/**
 * Minifies the element's stylesheet (a Lit css`` literal): comments go, and so does the whitespace around braces,
 * semicolons, commas and colons' values. Whitespace elsewhere (a descendant combinator before `:hover`, the
 * spaces of `calc()`) can mean something, so it is kept, only collapsed.
 */
function minifyCss(): Plugin {
  return {
    name: 'persona-chat-minify-css',
    transform(code, id) {
      if (!id.endsWith('persona-chat.styles.ts')) return undefined;
      return code.replace(/css`([^`]*)`/g, (_, sheet: string) => {
        const minified = sheet
          .replace(/\/\*[\s\S]*?\*\//g, '')
          .replace(/\s+/g, ' ')
          .replace(/\s*([{};,])\s*/g, '$1')
          .replace(/:\s+/g, ':')
          .replace(/;}/g, '}')
          .trim();
        return `css\`${minified}\``;
      });
    },
  };
}

// The browser bundle of <persona-chat>: one ES module with every dependency inside (and a small chunk per language
// beside it), and a classic-script build.
export default defineConfig({
  plugins: [minifyCss(), sizeBudget()],
  build: {
    target: 'es2022',
    sourcemap: true,
    emptyOutDir: false,
    outDir: 'dist',
    minify: true,
    // Lib mode keeps whitespace in ES output for downstream bundlers; this file goes to browsers as it is. The
    // string tables of other languages are chunks beside it, loaded by the pages that need them (the classic-script
    // build holds them all).
    rolldownOptions: { output: { minify: true, chunkFileNames: 'persona-chat-[name]-[hash].js' } },
    lib: {
      entry: 'src/element/define.ts',
      name: 'PersonaChat',
      formats: ['es', 'iife'],
      fileName: format => (format === 'es' ? 'persona-chat.js' : `persona-chat.${format}.js`),
    },
  },
});
