/**
 * `npm run build:browser`: the browser bundle, in the three builds vite.config.ts describes, in their order: the
 * chat (and the manifest naming it), the launcher that loads it, and the classic-script build. `--quiet` prints
 * warnings and errors only, as `npm start` wants.
 */
import { build } from 'vite';

const logLevel = process.argv.includes('--quiet') ? 'warn' : 'info';
for (const mode of ['chat', 'production', 'classic']) await build({ mode, logLevel });
