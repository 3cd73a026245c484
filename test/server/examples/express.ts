import express from 'express';
import { createBackend } from 'persona-chat/server';
import { nodeMiddleware } from 'persona-chat/server/node';

const backend = createBackend({
  serviceUrl: process.env.PERSONA_CHAT_SERVICE_URL!,
  apiKey: process.env.PERSONA_CHAT_API_KEY!,
  personaId: process.env.PERSONA_CHAT_PERSONA_ID!,
  tokenSecret: process.env.PERSONA_CHAT_TOKEN_SECRET!,
  allowedOrigins: ['https://www.example.com'],
  basePath: '/persona-chat',
  trustProxy: Number(process.env.PERSONA_CHAT_TRUST_PROXY ?? 0),
});

const app = express();
app.use(nodeMiddleware(backend)); // before any body parser: it reads the raw body
app.use(express.json());
app.get('/', (_req, res) => {
  res.send('<persona-chat endpoint="/persona-chat"></persona-chat>');
});
const server = app.listen(Number(process.env.PORT ?? 3000));
export default server;
