/**
 * @module
 * `persona-chat-server insights`: the site owner's report from the command line. Reads like the server's own flags
 * (each also in the environment as PERSONA_CHAT_<FLAG>, so the API key need not be typed), writes the report to
 * stdout or `--out`, and draws its progress on stderr when stderr is a terminal. A refusal by the service or a
 * malformed answer ends it with exit code 1 and one line saying so; a mistake in the flags with exit code 2.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { fail as failWith } from '../../cli-support.js';
import { ServiceError } from '../../service/errors.js';
import { envOfFlag } from '../config.js';
import { InsightsError } from './collect.js';
import type { Progress } from './collect.js';
import { formatInsights, insights } from './index.js';
import type { InsightsFormat } from './index.js';
import { PeriodError, parsePeriod } from './period.js';

const program = 'persona-chat-server insights';

export const help = `Usage: persona-chat-server insights [options]

Reads the conversations of the personas (or of the whole organization) from the
Conversation Service and reports what visitors asked and where the assistant failed:
per day and persona, conversations, messages, visitors (counted, never named), replies
stopped or failed, thumbs up and down, the questions asked most, the sources cited most,
questions answered with no source, the pages visitors asked from, tokens and their cost.
Every flag can be set in the environment as PERSONA_CHAT_<FLAG>.

Options:
  --service-url <url>        the Conversation Service's base URL (required)
  --api-key <key>            the service's API key (required; prefer PERSONA_CHAT_API_KEY)
  --api-key-header <name>    the header that carries it (default x-svc-api-key)
  --persona-id <uuid>        a persona whose conversations to read (repeatable; default:
                             the whole organization's conversations)
  --organization             read the whole organization's, even with persona ids set
  --since <n>h|d|w           the period: this far back from now (default 30d)
  --from <date>              the period's first day (YYYY-MM-DD, UTC) or time
  --to <date>                its last day, included (default: now)
  --format <html|json|csv>   what to write (default html: one file, no script, no requests)
  --out <file>               write it there (default: stdout)
  --include-text             put the texts in: questions, replies and visitors' comments
                             (default: counts only)
  --top <n>                  how many questions, sources and pages each list keeps (default 10)
  --price-per-1k <amount>    price of 1,000 tokens, for the estimated cost
  --currency <code>          its currency (default USD)
  --concurrency <n>          requests to the service at once (default 4)
  --retries <n>              times a request the service refused for a while (429, 5xx,
                             a dropped connection) is asked again (default 3)
  -h, --help                 show this help`;

const flags = {
  'service-url': { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-header': { type: 'string' },
  'persona-id': { type: 'string', multiple: true },
  organization: { type: 'boolean' },
  since: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  format: { type: 'string' },
  out: { type: 'string' },
  'include-text': { type: 'boolean' },
  top: { type: 'string' },
  'price-per-1k': { type: 'string' },
  currency: { type: 'string' },
  concurrency: { type: 'string' },
  retries: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function fail(message: string): never {
  return failWith(program, message);
}

/** Draws the progress on one line of a terminal, at most ten times a second, and clears it at the end. */
export function progressBar(stream: Pick<NodeJS.WriteStream, 'write'>, now = Date.now) {
  let last = 0;
  let drawn = false;
  const draw = (p: Progress, force = false) => {
    const time = now();
    if (!force && time - last < 100) return;
    last = time;
    const width = 24;
    const { done, total } = p.details;
    const line = total
      ? `[${'#'.repeat(Math.round((done / total) * width)).padEnd(width, '.')}] ${done}/${total} conversations read one by one`
      : `reading the lists: ${p.pages} page${p.pages === 1 ? '' : 's'}, ${p.conversations} conversations`;
    stream.write(`\r\x1b[2K${line}`);
    drawn = true;
  };
  return {
    update: (p: Progress) => draw(p),
    end: () => {
      if (drawn) stream.write('\r\x1b[2K');
    },
  };
}

export async function main(argv: string[]) {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, options: flags, strict: true, allowPositionals: false }));
  } catch (error) {
    fail(`${(error as Error).message} (see --help)`);
  }
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return;
  }
  const env = (flag: string) => process.env[envOfFlag(flag)] || undefined;
  const one = (flag: string) => (values[flag] as string | undefined) ?? env(flag);
  const whole = (flag: string, fallback: number, min: number) => {
    const value = one(flag);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min) fail(`--${flag} must be a whole number, ${min} or more`);
    return Number(value);
  };
  const serviceUrl = one('service-url');
  const apiKey = one('api-key');
  if (!serviceUrl) fail('--service-url is required (or PERSONA_CHAT_SERVICE_URL)');
  if (!/^https?:\/\//.test(serviceUrl)) fail('--service-url must be an http(s) URL');
  if (!apiKey) fail('--api-key is required (or PERSONA_CHAT_API_KEY)');
  const format = (one('format') ?? 'html') as InsightsFormat;
  if (!['html', 'json', 'csv'].includes(format)) fail('--format must be html, json or csv');
  const priceText = one('price-per-1k');
  const pricePer1K = priceText === undefined ? undefined : Number(priceText);
  if (pricePer1K !== undefined && !(/^\d+(\.\d+)?$/.test(priceText!) && Number.isFinite(pricePer1K))) {
    fail('--price-per-1k must be an amount such as 0.002');
  }
  const currency = (one('currency') ?? 'USD').toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) fail('--currency must be a three-letter code such as USD');
  const organization = values.organization === true || env('organization') === 'true';
  const personaIds = organization
    ? []
    : ((values['persona-id'] as string[] | undefined) ??
      env('persona-id')
        ?.split(',')
        .map(s => s.trim())
        .filter(Boolean) ??
      []);
  let period;
  try {
    period = parsePeriod({ since: one('since'), from: one('from'), to: one('to') }, new Date());
  } catch (error) {
    if (error instanceof PeriodError) fail(error.message);
    throw error;
  }

  const bar = process.stderr.isTTY ? progressBar(process.stderr) : undefined;
  let text: string;
  try {
    const report = await insights({
      service: { baseUrl: serviceUrl, apiKey, apiKeyHeader: one('api-key-header') },
      personaIds,
      from: period.from,
      to: period.to,
      top: whole('top', 10, 1),
      includeText: values['include-text'] === true || env('include-text') === 'true',
      pricePer1K,
      currency,
      concurrency: whole('concurrency', 4, 1),
      retries: whole('retries', 3, 0),
      onProgress: bar?.update,
    });
    text = formatInsights(report, format);
    bar?.end();
    if (report.read.inBlob) {
      process.stderr.write(
        `${program}: ${report.read.inBlob} conversations keep their messages in a blob, which the report does not read: their messages are not counted\n`,
      );
    }
  } catch (error) {
    bar?.end();
    if (error instanceof ServiceError) {
      // A refusal (a status), or an answer that cannot be the service's (a 200 that is not JSON, a dropped connection).
      const what =
        error.status >= 400
          ? `the service refused (${error.status} ${error.code})`
          : `no usable answer from the service (${error.code})`;
      process.stderr.write(`${program}: reading the conversations failed: ${what}: ${error.message}\n`);
      process.exit(1);
    }
    if (error instanceof InsightsError) {
      process.stderr.write(`${program}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const out = one('out');
  if (out) {
    try {
      await writeFile(out, text);
    } catch (error) {
      process.stderr.write(`${program}: could not write ${out}: ${(error as Error).message}\n`);
      process.exit(1);
    }
  } else {
    await new Promise<void>((resolve, reject) => process.stdout.write(text, e => (e ? reject(e) : resolve())));
  }
}
