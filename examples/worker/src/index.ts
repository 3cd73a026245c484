import { createBackend } from 'persona-chat/server';
import type { Backend } from 'persona-chat/server';

interface Env {
  PERSONA_CHAT_SERVICE_URL: string;
  PERSONA_CHAT_API_KEY: string;
  PERSONA_CHAT_PERSONA_ID: string;
  PERSONA_CHAT_TOKEN_SECRET: string;
  PERSONA_CHAT_ALLOWED_ORIGIN: string; // e.g. https://www.example.com
}

let backend: Backend | undefined;

export default {
  fetch(request: Request, env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
    backend ??= createBackend({
      serviceUrl: env.PERSONA_CHAT_SERVICE_URL,
      apiKey: env.PERSONA_CHAT_API_KEY,
      personaId: env.PERSONA_CHAT_PERSONA_ID,
      tokenSecret: env.PERSONA_CHAT_TOKEN_SECRET,
      allowedOrigins: [env.PERSONA_CHAT_ALLOWED_ORIGIN],
      basePath: '/persona-chat',
      clientIp: req => req.headers.get('cf-connecting-ip'),
    });
    return backend.fetch(request, env, ctx);
  },
};
