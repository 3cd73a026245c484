/**
 * @module
 * The backend: the token exchange and the proxy routes `<persona-chat>` uses, as a web-standard `fetch` handler.
 * It holds the service's API key, decides who the visitor is, and is the only place that keeps one visitor's
 * conversations from another's.
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getSignedCookie, setSignedCookie } from 'hono/cookie';
import { cors } from 'hono/cors';
import { z } from 'zod';
import { csrfHeader } from '../protocol.js';
import type { ConversationList, MessageReply, SessionResponse, StreamEvents } from '../protocol.js';
import { ServiceClient } from '../service/client.js';
import { ServiceError, redact } from '../service/errors.js';
import type { Conversation, StreamChunk } from '../service/types.js';
import { resolveConfig } from './config.js';
import type { BackendConfig, LogLine } from './config.js';
import { HttpError, notFound, toHttpError } from './errors.js';
import { Ownership, detailOf, isConversationId, summaryOf } from './ownership.js';
import { frame, ping, sseHeaders } from './sse.js';
import { MemoryStore } from './store.js';
import { Tokens, deriveSecret, newVisitorId, storageKey } from './tokens.js';
import type { TokenClaims } from './tokens.js';

export interface Backend {
  /** Serves every route under the base path; anything else is a 404 envelope. */
  fetch(request: Request, env?: unknown): Promise<Response>;
  /** Where the routes are mounted, e.g. `/persona-chat`. */
  readonly basePath: string;
  /** Closes connections to the service (HTTP/2 sessions). */
  close(): void;
}

type Env = {
  Variables: {
    requestId: string;
    user: TokenClaims;
    /** For streamed replies: settles with how the stream ended, when it ends. */
    outcome: Promise<LogLine['outcome']> | undefined;
    /** What went wrong, for the log line: our code, and the cause without secrets. */
    failure: { code: string; detail?: string } | undefined;
  };
};
type Ctx = Context<Env>;

const idempotencyKey = /^[A-Za-z0-9_.:-]{8,128}$/;
const cursorPattern = /^[A-Za-z0-9_.~+/=%-]{1,2048}$/;
const replayTtlMs = 10 * 60_000;

const metadataSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'metadata keys are 1 to 64 letters, digits, _ . or -'),
    z.string().max(500),
  )
  .refine(m => Object.keys(m).length <= 20, 'metadata has at most 20 keys')
  .refine(m => JSON.stringify(m).length <= 2048, 'metadata is at most 2 KB');

/** Makes the backend. Throws a ConfigError naming the setting when the configuration is wrong. */
export function createBackend(config: BackendConfig): Backend {
  const settings = resolveConfig(config);
  const { limits, basePath } = settings;
  const store = config.store ?? new MemoryStore();
  const log = config.log ?? ((line: LogLine) => console.log(JSON.stringify(line)));
  const service = new ServiceClient({
    baseUrl: settings.serviceUrl,
    http2BaseUrl: settings.http2ServiceUrl,
    apiKey: settings.apiKey,
    apiKeyHeader: settings.apiKeyHeader,
    routes: settings.routes,
    fetch: config.fetch,
    http2Fetch: config.http2Fetch,
    timeouts: config.timeouts,
  });
  const tokens = new Tokens(settings.tokenSecret, { ttlSeconds: settings.tokenTtlSeconds });
  const cookieSecret = deriveSecret(settings.tokenSecret, 'visitor-cookie');
  const userKeySecret = deriveSecret(settings.tokenSecret, 'user-key');
  const ownership = new Ownership(service);
  const secrets = [settings.apiKey];

  const messageSchema = z.strictObject({
    message: z
      .string({ error: 'message must be a string' })
      .refine(m => m.trim().length > 0, 'message must not be empty')
      .refine(
        m => m.length <= limits.messageMaxLength,
        `message must be at most ${limits.messageMaxLength} characters`,
      ),
  });
  const sessionSchema = z.strictObject({ personaId: z.string().optional() });
  const createSchema = z.strictObject({ metadata: metadataSchema.optional() });
  const patchSchema = z
    .strictObject({
      name: z.string().max(100, 'name must be at most 100 characters').optional(),
      status: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,32}$/, 'status is 1 to 32 letters, digits, _ or -')
        .optional(),
      active: z.boolean({ error: 'active must be true or false' }).optional(),
      metadata: metadataSchema.optional(),
    })
    .refine(body => Object.keys(body).length > 0, 'give at least one of name, status, active, metadata');

  const root = new Hono<Env>();
  const app = basePath === '/' ? root : root.basePath(basePath);

  app.use('*', async function requestLog(c, next) {
    const started = performance.now();
    c.set('requestId', crypto.randomUUID());
    await next();
    c.header('x-request-id', c.get('requestId'));
    const line = (outcome?: LogLine['outcome']): LogLine => ({
      time: new Date().toISOString(),
      level: c.res.status >= 500 || outcome === 'error' ? 'error' : c.res.status >= 400 ? 'warn' : 'info',
      requestId: c.get('requestId'),
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
      ...c.get('failure'),
      ...(outcome ? { outcome } : {}),
    });
    const outcome = c.get('outcome');
    if (outcome) void outcome.then(result => log(line(result)));
    else log(line());
  });

  const origins = settings.allowedOrigins;
  const allowOrigin = (origin: string) => (origins.has(origin) ? origin : null);
  app.use(
    '/session',
    cors({
      origin: allowOrigin,
      credentials: true,
      allowMethods: ['POST'],
      allowHeaders: ['Content-Type', csrfHeader],
      maxAge: 600,
    }),
  );
  app.use(
    '/conversations/*',
    cors({
      origin: allowOrigin,
      allowMethods: ['GET', 'POST', 'PATCH'],
      allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Accept'],
      exposeHeaders: ['Retry-After', 'X-Request-Id'],
      maxAge: 600,
    }),
  );
  app.use('*', async function varyOrigin(c, next) {
    await next();
    if (!c.res.headers.get('vary')?.includes('Origin')) c.res.headers.append('Vary', 'Origin');
  });

  app.use(
    '*',
    bodyLimit({
      maxSize: limits.bodyMaxBytes,
      onError() {
        throw new HttpError(413, 'payload_too_large', `The request body is larger than ${limits.bodyMaxBytes} bytes.`, {
          retryable: false,
        });
      },
    }),
  );

  // The token exchange. Cookie-authenticated, so it defends against cross-site requests.

  app.post('/session', async c => {
    const origin = c.req.header('origin');
    if (!origin || !origins.has(origin)) {
      throw new HttpError(403, 'origin_not_allowed', 'This page is not allowed to use this chat.', {
        retryable: false,
      });
    }
    if (c.req.header(csrfHeader) !== '1') {
      throw new HttpError(403, 'origin_not_allowed', `The ${csrfHeader} header is required.`, { retryable: false });
    }
    await rateLimitIp('session', limits.sessionsPerIpPerMinute, c);
    const body = await readJson(c, sessionSchema, { allowEmpty: true });
    const personaId = choosePersona(body.personaId);
    const sub = await visitor(c);
    const { token, expiresAt } = await tokens.issue({ sub, personaId });
    const response: SessionResponse = {
      token,
      expiresAt: expiresAt.toISOString(),
      user: { key: await storageKey(await userKeySecret, sub) },
      persona: { personaId },
    };
    c.header('cache-control', 'no-store');
    return c.json(response);
  });

  // Everything else takes the bearer token, never a cookie.

  app.use('/conversations/*', authenticate);

  app.post('/conversations', async c => {
    const { sub, personaId } = c.get('user');
    const body = await readJson(c, createSchema, { allowEmpty: true });
    const signal = c.req.raw.signal;
    let conversation: Conversation;
    if (settings.general) {
      conversation = await service.createConversation({ ...settings.general, externalUserId: sub }, { signal });
    } else {
      if (!personaId || !settings.personaIds.includes(personaId)) {
        throw new HttpError(401, 'token_invalid', 'The token is for a persona this chat no longer serves.', {
          retryable: false,
        });
      }
      conversation = await service.createPersonaConversation({ personaId, externalUserId: sub }, { signal });
    }
    ownership.remember(conversation.conversationId, sub);
    if (body.metadata && Object.keys(body.metadata).length) {
      const metadata = { ...conversation.metadata, client: body.metadata };
      conversation = await service.setMetadata(conversation.conversationId, metadata, { signal });
    }
    return c.json(summaryOf(conversation), 201);
  });

  app.get('/conversations', async c => {
    const { sub } = c.get('user');
    const cursor = c.req.query('cursor');
    if (cursor !== undefined && !cursorPattern.test(cursor)) {
      throw new HttpError(400, 'invalid_request', 'cursor is not one this list gave.', { retryable: false });
    }
    const page = await service.listUserConversations(sub, { continuationToken: cursor, signal: c.req.raw.signal });
    const mine = (page.data ?? []).filter(
      conversation => conversation.externalUserId === sub && !conversation.isDeleted,
    );
    for (const conversation of mine) ownership.remember(conversation.conversationId, sub);
    const list: ConversationList = { data: mine.map(summaryOf), next: page.continuationToken || null };
    return c.json(list);
  });

  app.get('/conversations/:id', async c => {
    const conversation = await ownership.check(c.get('user').sub, conversationId(c), {
      signal: c.req.raw.signal,
      fetch: true,
    });
    return c.json(detailOf(conversation!));
  });

  app.patch('/conversations/:id', async c => {
    const id = conversationId(c);
    const body = await readJson(c, patchSchema);
    const signal = c.req.raw.signal;
    let conversation = await ownership.check(c.get('user').sub, id, { signal, fetch: true });
    if (body.name !== undefined) conversation = await service.setConversationName(id, body.name, { signal });
    if (body.status !== undefined) conversation = await service.setConversationStatus(id, body.status, { signal });
    if (body.active !== undefined) conversation = await service.setActive(id, body.active, { signal });
    if (body.metadata !== undefined) {
      conversation = await service.setMetadata(id, { ...conversation!.metadata, client: body.metadata }, { signal });
    }
    return c.json(summaryOf(conversation!));
  });

  app.post('/conversations/:id/messages', async c => {
    const { sub } = c.get('user');
    const id = conversationId(c);
    const key = c.req.header('idempotency-key');
    if (!key || !idempotencyKey.test(key)) {
      throw new HttpError(
        400,
        'invalid_request',
        'An Idempotency-Key header of 8 to 128 letters, digits, _ . : or - is required.',
        {
          retryable: false,
        },
      );
    }
    const { message } = await readJson(c, messageSchema);
    const wantsStream = (c.req.header('accept') ?? '').includes('text/event-stream');
    await rateLimit(`message:user:${sub}`, limits.messagesPerUserPerMinute);
    await rateLimitIp('message', limits.messagesPerIpPerMinute, c);

    const claimKey = `idempotency:${sub}:${id}:${key}`;
    const claim = await store.claim(claimKey, replayTtlMs);
    if (claim.state === 'running') {
      throw new HttpError(409, 'duplicate_request', 'This message is already being answered.', {
        retryable: true,
        retryAfter: 1,
      });
    }
    if (claim.state === 'done') {
      const reply = JSON.parse(claim.value) as MessageReply;
      if (!wantsStream) return c.json(reply);
      c.set('outcome', Promise.resolve('replayed'));
      return new Response(new Blob(replayFrames(id, reply)).stream(), { headers: sseHeaders });
    }

    const slot = `streams:${sub}`;
    let slotTaken = false;
    const upstream = new AbortController();
    const onClientAbort = () => upstream.abort(c.req.raw.signal.reason);
    c.req.raw.signal.addEventListener('abort', onClientAbort, { once: true });
    const finish = async (result?: MessageReply) => {
      c.req.raw.signal.removeEventListener('abort', onClientAbort);
      if (slotTaken) await store.release(slot);
      slotTaken = false;
      if (result) await store.complete(claimKey, JSON.stringify(result), replayTtlMs);
      else await store.abandon(claimKey);
    };

    let chunks: AsyncGenerator<StreamChunk>;
    try {
      await ownership.check(sub, id, { signal: upstream.signal });
      slotTaken = await store.acquire(slot, limits.concurrentStreamsPerUser);
      if (!slotTaken) {
        throw new HttpError(429, 'rate_limited', 'Too many replies at once. Wait for one to finish.', {
          retryAfter: 1,
        });
      }
      chunks = await service.openReply(id, message, settings.delivery, { signal: upstream.signal });
    } catch (error) {
      await finish();
      if (error instanceof ServiceError && error.status === 404) throw notFound();
      throw error;
    }

    const reply: MessageReply = {
      messageId: null,
      runId: null,
      content: '',
      finishReason: null,
      citations: [],
      usage: null,
    };
    const absorb = (chunk: StreamChunk) => {
      if (chunk.type === 'delta') reply.content += chunk.text;
      else if (chunk.type === 'citations') reply.citations = chunk.citations;
      else {
        reply.messageId = chunk.messageId ?? null;
        reply.runId = chunk.runId ?? null;
        reply.finishReason = chunk.finishReason ?? null;
        reply.usage = chunk.usage ?? null;
      }
    };

    if (!wantsStream) {
      try {
        for await (const chunk of chunks) absorb(chunk);
      } catch (error) {
        await finish();
        throw error;
      }
      await finish(reply);
      return c.json(reply);
    }

    let settle: (outcome: LogLine['outcome']) => void = () => {};
    c.set('outcome', new Promise(resolve => (settle = resolve)));
    let timer: ReturnType<typeof setInterval> | undefined;
    let closed = false;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(frame('meta', { conversationId: id }));
        timer = setInterval(() => controller.enqueue(ping()), settings.pingIntervalMs);
        // Pings never hold a process open by themselves (runtimes without unref have no such concern).
        (timer as { unref?: () => void }).unref?.();
      },
      async pull(controller) {
        try {
          const next = await chunks.next();
          if (closed) return;
          if (next.done) throw new Error('The reply ended without a terminal chunk.');
          const chunk = next.value;
          absorb(chunk);
          if (chunk.type === 'delta') controller.enqueue(frame('delta', { text: chunk.text }));
          else if (chunk.type === 'citations') controller.enqueue(frame('citations', { citations: chunk.citations }));
          else {
            closed = true;
            clearInterval(timer);
            await chunks.return(undefined);
            await finish(reply);
            controller.enqueue(frame('done', doneOf(reply)));
            controller.close();
            settle('done');
          }
        } catch (error) {
          if (closed) return;
          closed = true;
          clearInterval(timer);
          await finish();
          const failure = toHttpError(error);
          if (upstream.signal.aborted && c.req.raw.signal.aborted) {
            settle('aborted');
            return controller.close();
          }
          noteFailure(c, failure, error);
          const event: StreamEvents['error'] = {
            code: failure.code,
            message: failure.message,
            retryable: failure.retryable,
          };
          controller.enqueue(frame('error', event));
          controller.close();
          settle('error');
        }
      },
      async cancel(reason) {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        upstream.abort(reason ?? new DOMException('The browser went away.', 'AbortError'));
        await chunks.return(undefined).catch(() => {});
        await finish();
        settle('aborted');
      },
    });
    return new Response(body, { headers: sseHeaders });
  });

  root.notFound(c => errorResponse(c as Ctx, new HttpError(404, 'not_found', 'No such route.', { retryable: false })));
  root.onError((error, c) => {
    const failure = toHttpError(error);
    noteFailure(c as Ctx, failure, error);
    return errorResponse(c as Ctx, failure);
  });

  function errorResponse(c: Ctx, error: HttpError) {
    for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
    if (error.retryAfter) c.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfter))));
    return c.json(error.envelope(c.get('requestId') ?? crypto.randomUUID()), error.status as 400);
  }

  /** Notes a failure for the request's log line; the cause only for our own or the service's failures. */
  function noteFailure(c: Ctx, failure: HttpError, error: unknown) {
    const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    c.set('failure', {
      code: failure.code,
      ...(failure.status >= 500 ? { detail: redact(cause, secrets).slice(0, 500) } : {}),
    });
  }

  async function authenticate(c: Ctx, next: () => Promise<void>) {
    if (c.req.method === 'OPTIONS') return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(header);
    if (!header) {
      throw new HttpError(401, 'token_missing', 'A token is required.', {
        retryable: false,
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    if (!match) {
      throw new HttpError(401, 'token_invalid', 'The token is not valid.', {
        retryable: false,
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    c.set('user', await tokens.verify(match[1]!));
    return next();
  }

  function conversationId(c: Ctx): string {
    const id = c.req.param('id') ?? '';
    if (!isConversationId(id))
      throw new HttpError(400, 'invalid_request', 'The conversation id is malformed.', { retryable: false });
    return id;
  }

  function choosePersona(requested: string | undefined): string | null {
    if (settings.general) {
      if (requested) throw new HttpError(400, 'invalid_request', 'This chat serves no personas.', { retryable: false });
      return null;
    }
    if (requested === undefined) return settings.personaIds[0]!;
    if (!settings.personaIds.includes(requested)) {
      throw new HttpError(400, 'invalid_request', 'This chat does not serve that persona.', { retryable: false });
    }
    return requested;
  }

  /** The externalUserId: the site's own user, or an anonymous visitor named by a signed cookie. */
  async function visitor(c: Ctx): Promise<string> {
    const identified = await config.identify?.(c.req.raw);
    if (identified !== undefined && identified !== null) {
      if (typeof identified !== 'string' || identified.length < 1 || identified.length > 256) {
        throw new HttpError(500, 'internal_error', 'The identify hook returned an unusable user id.');
      }
      return identified;
    }
    const secret = await cookieSecret;
    const current = await getSignedCookie(c, secret, settings.cookie.name);
    if (typeof current === 'string' && /^[A-Za-z0-9_-]{22}$/.test(current)) return `anon_${current}`;
    const id = newVisitorId();
    const secure = settings.cookie.secure === 'auto' ? requestIsHttps(c) : settings.cookie.secure;
    await setSignedCookie(c, settings.cookie.name, id, secret, {
      path: basePath,
      httpOnly: true,
      sameSite: 'Lax',
      secure,
      maxAge: settings.cookie.maxAgeSeconds,
    });
    return `anon_${id}`;
  }

  function requestIsHttps(c: Ctx) {
    if (new URL(c.req.url).protocol === 'https:') return true;
    return settings.trustedHops > 0 && c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https';
  }

  /** The client's address: the hook's, the socket's, or the one the trusted proxies in front of us recorded. */
  function clientIp(c: Ctx): string | undefined {
    if (config.clientIp) return config.clientIp(c.req.raw) ?? undefined;
    const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
    const socket = incoming?.socket?.remoteAddress;
    if (settings.trustedHops === 0 || !socket) return socket;
    const forwarded = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map(part => part.trim())
      .filter(Boolean);
    const chain = [...forwarded, socket];
    return chain[Math.max(0, chain.length - 1 - settings.trustedHops)];
  }

  /** Per-IP limits apply only when the address is known. */
  async function rateLimitIp(kind: string, perMinute: number, c: Ctx) {
    const ip = clientIp(c);
    if (ip) await rateLimit(`${kind}:ip:${ip}`, perMinute);
  }

  async function rateLimit(key: string, perMinute: number) {
    const { count, resetMs } = await store.hit(key, 60_000);
    if (count > perMinute) {
      throw new HttpError(429, 'rate_limited', 'Too many requests. Try again shortly.', { retryAfter: resetMs / 1000 });
    }
  }

  return {
    fetch: (request, env) => Promise.resolve(root.fetch(request, env)),
    basePath,
    close: () => service.close(),
  };
}

async function readJson<T>(c: Ctx, schema: z.ZodType<T>, { allowEmpty = false } = {}): Promise<T> {
  const type = c.req.header('content-type') ?? '';
  const text = await c.req.text();
  if (allowEmpty && text.trim() === '' && !type) return schema.parse({});
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', 'The request body must be application/json.', {
      retryable: false,
    });
  }
  let parsed: unknown;
  try {
    parsed = allowEmpty && text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new HttpError(400, 'invalid_request', 'The request body is not valid JSON.', { retryable: false });
  }
  const result = schema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    const message = issue?.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : issue?.message;
    throw new HttpError(400, 'invalid_request', `${where}${message ?? 'invalid body'}`, { retryable: false });
  }
  return result.data;
}

function doneOf(reply: MessageReply): StreamEvents['done'] {
  return { messageId: reply.messageId, runId: reply.runId, finishReason: reply.finishReason, usage: reply.usage };
}

/** A finished reply, told again as a stream: meta, the whole text, its citations, done. */
function replayFrames(conversationId: string, reply: MessageReply): Uint8Array<ArrayBuffer>[] {
  return [
    frame('meta', { conversationId, ...(reply.messageId ? { messageId: reply.messageId } : {}) }),
    ...(reply.content ? [frame('delta', { text: reply.content })] : []),
    ...(reply.citations.length ? [frame('citations', { citations: reply.citations })] : []),
    frame('done', doneOf(reply)),
  ];
}
