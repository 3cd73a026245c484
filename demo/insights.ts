/**
 * The insights report on a month of made-up conversations: the emulator seeded with 1,200 of them, and the report
 * made from it exactly as `persona-chat-server insights` makes it, texts and an example price included.
 * `npm run demo:insights [-- file.html]` writes it (default: persona-chat-insights.html in the system's temporary
 * folder) and prints where, to open in any browser.
 */
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { startEmulator } from '../src/emulator/node.js';
import { formatInsights, insights } from '../src/server/insights/index.js';

const out = resolve(process.argv[2] ?? join(tmpdir(), 'persona-chat-insights.html'));
const apiKey = randomBytes(16).toString('hex');
const running = await startEmulator({ apiKey, seed: { conversations: 1200 } });
try {
  const to = new Date(new Date().toISOString().slice(0, 10));
  const report = await insights({
    service: { baseUrl: running.url, apiKey },
    from: new Date(to.getTime() - 30 * 86_400_000),
    to,
    includeText: true,
    pricePer1K: 0.002,
  });
  await writeFile(out, formatInsights(report, 'html'));
  console.log(`persona-chat insights demo: ${pathToFileURL(out).href}`);
  console.log(
    `The same from a running service: PERSONA_CHAT_API_KEY=<key> persona-chat-server insights --service-url <url> --since 30d --include-text --price-per-1k 0.002 --out report.html`,
  );
} finally {
  await running.close();
}
