import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { createBackend } from 'persona-chat/server';
import { nodeMiddleware } from 'persona-chat/server/node';

const backend = createBackend({
  serviceUrl: process.env.PERSONA_CHAT_SERVICE_URL!,
  apiKey: process.env.PERSONA_CHAT_API_KEY!,
  personaId: process.env.PERSONA_CHAT_PERSONA_ID!,
  tokenSecret: process.env.PERSONA_CHAT_TOKEN_SECRET!,
  allowedOrigins: [process.env.PERSONA_CHAT_ALLOWED_ORIGIN!], // e.g. https://www.example.com
  basePath: '/persona-chat',
  trustProxy: Number(process.env.PERSONA_CHAT_TRUST_PROXY ?? 0),
});

const app = express();
app.use(nodeMiddleware(backend)); // before any body parser: it reads the raw body
app.use(express.json());
// The element's public folder: the launcher, and what it loads from beside it. A file whose name carries a hash never
// changes; the launcher, the manifest and the classic-script build change with each release.
const assets = dirname(fileURLToPath(import.meta.resolve('persona-chat/persona-chat.js')));
const unhashed = /\/persona-chat(-manifest|\.iife)?\.js$/;
app.use(
  '/assets',
  express.static(assets, {
    setHeaders: (res, path) =>
      res.setHeader('Cache-Control', unhashed.test(path) ? 'no-cache' : 'public, max-age=31536000, immutable'),
  }),
);
app.get('/', (_req, res) => {
  res.send(`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Help</title>
    <script type="module" src="/assets/persona-chat.js"></script>
  </head>
  <body>
    <persona-chat endpoint="/persona-chat" heading="Help" mode="inline"></persona-chat>
  </body>
</html>`);
});
const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
export default server;
