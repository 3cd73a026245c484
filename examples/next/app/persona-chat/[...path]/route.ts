// app/persona-chat/[...path]/route.ts
import { createBackend } from 'persona-chat/server';

const backend = createBackend({
  serviceUrl: process.env.PERSONA_CHAT_SERVICE_URL!,
  apiKey: process.env.PERSONA_CHAT_API_KEY!,
  personaId: process.env.PERSONA_CHAT_PERSONA_ID!,
  tokenSecret: process.env.PERSONA_CHAT_TOKEN_SECRET!,
  allowedOrigins: [process.env.PERSONA_CHAT_ALLOWED_ORIGIN!], // e.g. https://www.example.com
  basePath: '/persona-chat',
  clientIp: request => request.headers.get('x-real-ip'),
});

const handler = (request: Request) => backend.fetch(request);
export { handler as GET, handler as POST, handler as PATCH, handler as DELETE, handler as OPTIONS };
