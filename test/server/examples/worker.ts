import { createBackend } from 'persona-chat/server';
import type { Backend } from 'persona-chat/server';

interface Env {
  PERSONA_CHAT_SERVICE_URL: string;
  PERSONA_CHAT_API_KEY: string;
  PERSONA_CHAT_PERSONA_ID: string;
  PERSONA_CHAT_TOKEN_SECRET: string;
}

let backend: Backend | undefined;

export default {
  // ctx: the Worker's execution context, whose waitUntil lets a reply go on after its request.
  fetch(request: Request, env: Env, ctx: { waitUntil(work: Promise<unknown>): void }): Promise<Response> {
    backend ??= createBackend({
      serviceUrl: env.PERSONA_CHAT_SERVICE_URL,
      apiKey: env.PERSONA_CHAT_API_KEY,
      personaId: env.PERSONA_CHAT_PERSONA_ID,
      tokenSecret: env.PERSONA_CHAT_TOKEN_SECRET,
      allowedOrigins: ['https://www.example.com'],
      basePath: '/persona-chat',
      clientIp: req => req.headers.get('cf-connecting-ip'),
    });
    return backend.fetch(request, env, ctx);
  },
};
