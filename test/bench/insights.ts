/**
 * The insights report's bench: a month of 2,000 seeded conversations in the emulator, read over real HTTP and made
 * into each format. Prints the time to read them (wall), and the CPU time of computing the figures and writing
 * each format from the conversations read, the median of a few rounds. `npm run bench:insights`; BENCH_CONVERSATIONS
 * changes the number.
 */
import { cpuUsage } from 'node:process';
import { startEmulator } from '../../src/emulator/node.js';
import { collectConversations } from '../../src/server/insights/collect.js';
import { computeInsights } from '../../src/server/insights/compute.js';
import { formatInsights } from '../../src/server/insights/index.js';
import { ServiceClient } from '../../src/service/client.js';

const count = Number(process.env.BENCH_CONVERSATIONS ?? 2000);
const rounds = 5;
const apiKey = 'bench-key';
const end = '2026-03-01';

const cpuMs = (work: () => void) => {
  const start = cpuUsage();
  work();
  const used = cpuUsage(start);
  return (used.user + used.system) / 1000;
};
const median = (values: number[]) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)]!;

const running = await startEmulator({ apiKey, seed: { conversations: count, end } });
const client = new ServiceClient({ baseUrl: running.url, apiKey });
try {
  const wall = performance.now();
  const conversations = await collectConversations(client);
  const readMs = performance.now() - wall;
  const options = {
    from: new Date('2026-01-30T00:00:00Z'),
    to: new Date(`${end}T00:00:00Z`),
    includeText: true,
    pricePer1K: 0.002,
  };
  let report = computeInsights(conversations, options);
  const compute = median(
    Array.from({ length: rounds }, () => cpuMs(() => (report = computeInsights(conversations, options)))),
  );
  const sizes: Record<string, number> = {};
  const formats = Object.fromEntries(
    (['html', 'json', 'csv'] as const).map(format => [
      format,
      median(
        Array.from({ length: rounds }, () => cpuMs(() => (sizes[format] = formatInsights(report, format).length))),
      ),
    ]),
  );
  const pages = Math.ceil(conversations.length / 10);
  console.log(
    `insights bench: ${conversations.length} conversations, ${report.figures.messages} messages, ${pages} pages`,
  );
  console.log(`  read over HTTP (emulator in the same process): ${readMs.toFixed(0)} ms wall`);
  console.log(`  compute the figures: ${compute.toFixed(1)} ms CPU (median of ${rounds})`);
  for (const [format, ms] of Object.entries(formats)) {
    console.log(`  write ${format}: ${ms.toFixed(1)} ms CPU, ${(sizes[format]! / 1024).toFixed(0)} KiB`);
  }
  const total = compute + formats.html!;
  console.log(`  figures and HTML report: ${total.toFixed(1)} ms CPU`);
} finally {
  client.close();
  await running.close();
}
