/**
 * Runs terser's compressor (its safe transforms only, two passes) over each chunk before the bundler's own minifier:
 * the two together write the browser bundle smaller than either alone. A third pass saves a few bytes of code, and
 * costs more in gzip than it saves: what is served is gzipped. Source maps are chained through it.
 */
import { minify } from 'terser';
import type { Plugin } from 'vite';

export function compress(): Plugin {
  return {
    name: 'persona-chat-compress',
    async renderChunk(code, _chunk, { format }) {
      // A classic script's top level is the page's: its names stay.
      const module = format === 'es';
      const out = await minify(code, { module, ecma: 2020, compress: { passes: 2 }, mangle: false, sourceMap: true });
      return { code: out.code!, map: out.map as string };
    },
  };
}
