// One server of the backend bench, in a process of its own so that its CPU and memory are its own: the emulator, a
// bare node:http proxy, or the backend as built in dist/. Prints one JSON line with its URL once it listens, and
// stops when its parent goes away.
//
//   node test/bench/serve.mjs emulator
//   node test/bench/serve.mjs proxy <serviceUrl>              (POST /<conversationId>)
//   node test/bench/serve.mjs backend <serviceUrl> <personaId> [redisUrl]
import { createServer, request as httpRequest } from 'node:http';

const [kind, serviceUrl, id, redisUrl] = process.argv.slice(2);
const apiKey = 'bench-key';
const site = 'https://bench.example.com';

const ready = info => process.stdout.write(`${JSON.stringify(info)}\n`);
process.stdin.on('end', () => process.exit(0)).resume();

if (kind === 'emulator') {
  const { startEmulator } = await import('../../dist/emulator/node.js');
  const service = await startEmulator({ apiKey, pace: 0 });
  ready({ url: service.url, personaId: service.emulator.personas[1].personaId });
} else if (kind === 'proxy') {
  // The floor: adds the API key and pipes the service's stream, nothing else.
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      `${serviceUrl}/conversations${req.url}/chat-sse`,
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
} else if (kind === 'backend') {
  const { createBackend } = await import('../../dist/server/index.js');
  const { serveBackend } = await import('../../dist/server/node.js');
  let store;
  if (redisUrl) {
    const { RedisStore } = await import('../../dist/server/redis-store.js');
    store = new RedisStore({ url: redisUrl });
    for (let tries = 0; ; tries++) {
      try {
        await store.ping();
        break;
      } catch (error) {
        if (tries > 100) throw error;
        await new Promise(resolve => setTimeout(resolve, 20));
      }
    }
  }
  const running = await serveBackend(
    createBackend({
      serviceUrl,
      apiKey,
      personaId: id,
      tokenSecret: 'a-bench-secret-of-more-than-thirty-two-bytes',
      allowedOrigins: [site],
      store,
      limits: {
        messagesPerUserPerMinute: 1e9,
        messagesPerIpPerMinute: 1e9,
        conversationsPerUserPerMinute: 1e9,
        concurrentStreamsPerUser: 1e9,
      },
      // BENCH_LOG=1 prints the log lines of requests that went wrong, on stderr.
      log: process.env.BENCH_LOG ? line => line.level !== 'info' && console.error(JSON.stringify(line)) : () => {},
    }),
  );
  ready({ url: running.url });
} else {
  console.error(`unknown server kind: ${kind}`);
  process.exit(2);
}
