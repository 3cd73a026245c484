import { gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';
import type { Plugin } from 'vite';

/** Every byte of the element ships to every visitor: the build fails above this gzip size. */
const budgetBytes = 40 * 1024;

function sizeBudget(): Plugin {
  return {
    name: 'persona-chat-size-budget',
    generateBundle(_options, bundle) {
      for (const file of Object.values(bundle)) {
        if (file.type !== 'chunk' || file.fileName !== 'persona-chat.js') continue;
        const gzip = gzipSync(file.code, { level: 9 }).length;
        const line = `persona-chat.js: ${(file.code.length / 1024).toFixed(1)} KB, ${(gzip / 1024).toFixed(1)} KB gzip (budget ${budgetBytes / 1024} KB)`;
        if (gzip > budgetBytes) this.error(`${line}: over budget`);
        this.info(line);
      }
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
