import { defineConfig } from 'vite';

// The browser bundle of <persona-chat>: one ES module with every dependency inside, and a classic-script build.
export default defineConfig({
  build: {
    target: 'es2022',
    sourcemap: true,
    emptyOutDir: false,
    outDir: 'dist/browser',
    lib: {
      entry: 'src/element/define.ts',
      name: 'PersonaChat',
      formats: ['es', 'iife'],
      fileName: format => (format === 'es' ? 'persona-chat.js' : `persona-chat.${format}.js`),
    },
  },
});
