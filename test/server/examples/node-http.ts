import { createServer } from 'node:http';
import { createBackend } from 'persona-chat/server';
import { nodeMiddleware } from 'persona-chat/server/node';

const backend = createBackend({
  serviceUrl: process.env.PERSONA_CHAT_SERVICE_URL!,
  apiKey: process.env.PERSONA_CHAT_API_KEY!,
  personaId: process.env.PERSONA_CHAT_PERSONA_ID!,
  tokenSecret: process.env.PERSONA_CHAT_TOKEN_SECRET!,
  allowedOrigins: ['https://www.example.com'],
  basePath: '/persona-chat',
});
const chat = nodeMiddleware(backend);

const server = createServer((req, res) =>
  chat(req, res, () => {
    // The rest of your site.
    res.writeHead(404).end('Not found');
  }),
);
server.listen(Number(process.env.PORT ?? 3000));
export default server;
