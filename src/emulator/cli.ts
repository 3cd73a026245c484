#!/usr/bin/env node
/**
 * @module
 * `persona-chat-emulator`: runs the Conversation Service emulator from the command line.
 */
import { parseArgs } from 'node:util';
import { fail as failWith, stopOnSignals } from '../cli-support.js';
import { readPersonasFile, startEmulator } from './node.js';
import type { StartEmulatorOptions } from './node.js';

const help = `Usage: persona-chat-emulator [options]

Runs a local Conversation Service: every operation of the interface, both path forms,
SSE, HTTP/2 and complete-response replies, answered from the personas' documents.

Options:
  --port <n>              HTTP/1.1 port (default 4010; 0 picks a free one)
  --http2-port <n>        HTTP/2 (cleartext, prior knowledge) port (default: --port + 1,
                          or a free one when --port is 0)
  --host <address>        address to listen on (default 127.0.0.1)
  --api-key <key>         the API key every request must carry (default dev-key)
  --api-key-header <name> the header that carries it (default x-svc-api-key)
  --personas <file>       a personas JSON file (default: the two demo personas)
  --pace <n>              words per second of streamed replies; 0 = as fast as possible
                          (default 12)
  --routes <form>         continue paths to serve: both, chat (form B) or continue (form A)
                          (default both)
  --openai-base-url <url> generate replies with this OpenAI-compatible API instead of the
                          built-in engine (grounded on the same documents)
  --openai-api-key <key>  its API key
  --openai-model <name>   its model (required with --openai-base-url)
  --seed <n>              start with n made-up conversations over the last 30 days (several
                          visitors, pages, feedback, stopped and failed replies), the same
                          ones every time for the same n and day
  -h, --help              show this help

On start it prints one line per listener, "listening on http://HOST:PORT" (HTTP/1.1 first,
then HTTP/2), and one line per persona, "persona <personaId> <name>".
Faults: POST /__emulator/faults (see the README). Stop with Ctrl+C.`;

function fail(message: string): never {
  return failWith('persona-chat-emulator', message);
}

function portOf(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`${flag} must be a port number from 0 to 65535`);
  return port;
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        'http2-port': { type: 'string' },
        host: { type: 'string' },
        'api-key': { type: 'string' },
        'api-key-header': { type: 'string' },
        personas: { type: 'string' },
        pace: { type: 'string' },
        routes: { type: 'string' },
        'openai-base-url': { type: 'string' },
        'openai-api-key': { type: 'string' },
        'openai-model': { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    fail(`${(error as Error).message} (see --help)`);
  }
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return;
  }
  const port = portOf('--port', values.port, 4010);
  const http2Port = portOf('--http2-port', values['http2-port'], port === 0 ? 0 : port + 1);
  const pace = values.pace === undefined ? 12 : Number(values.pace);
  if (!Number.isFinite(pace) || pace < 0) fail('--pace must be a number of words per second, 0 or more');
  const routes = values.routes ?? 'both';
  if (routes !== 'both' && routes !== 'chat' && routes !== 'continue') fail('--routes must be both, chat or continue');
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0))
    fail('--seed must be a whole number of conversations');
  const openaiBaseUrl = values['openai-base-url'];
  if (openaiBaseUrl && !values['openai-model']) fail('--openai-model is required with --openai-base-url');

  const options: StartEmulatorOptions = {
    port,
    http2Port,
    host: values.host ?? '127.0.0.1',
    apiKey: values['api-key'] ?? 'dev-key',
    apiKeyHeader: values['api-key-header'],
    pace,
    routes,
    ...(seed ? { seed: { conversations: seed } } : {}),
  };
  if (values.personas) {
    try {
      options.personas = await readPersonasFile(values.personas);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  if (openaiBaseUrl) {
    options.openai = { baseUrl: openaiBaseUrl, apiKey: values['openai-api-key'], model: values['openai-model']! };
  }

  let running;
  try {
    running = await startEmulator(options);
  } catch (error) {
    fail(`could not start: ${(error as Error).message}`);
  }
  process.stdout.write(`listening on ${running.url}\nlistening on ${running.http2Url}\n`);
  for (const persona of running.emulator.personas)
    process.stdout.write(`persona ${persona.personaId} ${persona.name}\n`);

  stopOnSignals(() => running.close());
}

await main();
