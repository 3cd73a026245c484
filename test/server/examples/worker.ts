import { createBackend } from 'persona-chat/server';
import type { Backend } from 'persona-chat/server';

interface Env {
  SERVICE_URL: string;
  SERVICE_API_KEY: string;
  PERSONA_ID: string;
  TOKEN_SECRET: string;
}

let backend: Backend | undefined;

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    backend ??= createBackend({
      serviceUrl: env.SERVICE_URL,
      apiKey: env.SERVICE_API_KEY,
      personaId: env.PERSONA_ID,
      tokenSecret: env.TOKEN_SECRET,
      allowedOrigins: ['https://www.example.com'],
      basePath: '/persona-chat',
      clientIp: req => req.headers.get('cf-connecting-ip'),
    });
    return backend.fetch(request);
  },
};
