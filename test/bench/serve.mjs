// One server of the backend bench, in a process of its own so that its CPU and memory are its own: the emulator or a
// bare node:http proxy. (The backend runs as the shipped CLI runs it, dist/server/cli.js: see backend.ts.) Prints
// one JSON line with its URL once it listens, and stops when its parent goes away.
//
//   node test/bench/serve.mjs emulator <pace>    (words per second; 0 = as fast as possible)
//   node test/bench/serve.mjs proxy <serviceUrl>  (POST /<conversationId>)
import { createServer, request as httpRequest } from 'node:http';

const [kind, arg] = process.argv.slice(2);
const apiKey = 'bench-key';

const ready = info => process.stdout.write(`${JSON.stringify(info)}\n`);
process.stdin.on('end', () => process.exit(0)).resume();

/**
 * A persona whose answer to `heldMessage` is one passage of 240 words: at the emulator's default pace, 12 words a
 * second, a reply held open for 20 s, about what a model takes to write as much.
 */
function heldPersona() {
  const clause = i =>
    `item ${i} of the long answer names the trail, the weather, the pack, the boots, the map and the water, then`;
  const words = Array.from({ length: 10 }, (_, i) => clause(i + 1)).join(' ');
  return {
    personaId: '00000000-0000-4000-8000-00000000b0b0',
    personaVersionId: '00000000-0000-4000-8000-00000000b0b1',
    name: 'Bench',
    documents: [
      {
        documentId: 'long-answer',
        title: 'The long answer',
        passages: [
          `The long answer begins here, and now ${words} it ends. That is all of the long answer, from the first word to the last one right here.`,
        ],
      },
    ],
  };
}

if (kind === 'emulator') {
  const { startEmulator } = await import('../../dist/emulator/node.js');
  const { defaultPersonas, parsePersonas } = await import('../../dist/emulator/personas.js');
  const [held] = parsePersonas({ personas: [heldPersona()] });
  const service = await startEmulator({ apiKey, pace: Number(arg ?? 0), personas: [...defaultPersonas, held] });
  ready({ url: service.url, personaId: service.emulator.personas[1].personaId, heldPersonaId: held.personaId });
} else if (kind === 'proxy') {
  // The floor: adds the API key and pipes the service's stream, nothing else. Its requests to the service go through
  // Node's global agent, which keeps connections alive, as the backend's transport does.
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      `${arg}/conversations${req.url}/chat-sse`,
      { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey } },
      answer => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', error => {
      if (res.headersSent) return res.destroy(error);
      res.writeHead(502, { 'x-upstream-error': error.code ?? 'unknown' }).end();
    });
    req.pipe(upstream);
  });
  // The same backlog as the backend's and the emulator's, so that the floor is not the first to drop connections.
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () =>
    ready({ url: `http://127.0.0.1:${server.address().port}` }),
  );
} else {
  console.error(`unknown server kind: ${kind}`);
  process.exit(2);
}
