/**
 * @module
 * The backend: the token exchange and the proxy routes `<persona-chat>` uses, as a web-standard `fetch` handler.
 * It holds the service's API key, decides who the visitor is, and is the only place that keeps one visitor's
 * conversations from another's. This file puts the parts together; the routes are in `./routes/`, the middleware
 * in `./middleware/`, replies as runs in `./runs.ts`.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { requestId } from 'hono/request-id';
import { csrfHeader, resendHeader } from '../protocol.js';
import { ServiceClient } from '../service/client.js';
import { ServiceError, redact } from '../service/errors.js';
import { ConfigError, resolveBasePath, resolveConfig } from './config.js';
import type { BackendConfig, LogLine } from './config.js';
import { noteExecutionCtx } from './env.js';
import type { Env } from './env.js';
import type { Parts } from './parts.js';
import { HttpError, notFound } from './errors.js';
import { errorHandlers } from './middleware/error-handler.js';
import { Limiter } from './limits.js';
import { bearerToken } from './middleware/bearer-token.js';
import { cors } from './middleware/cors.js';
import { requestLog } from './middleware/request-log.js';
import { refusalNotes } from './origins.js';
import { Ownership } from './ownership.js';
import { conversationRoutes } from './routes/conversations.js';
import { feedbackRoutes } from './routes/feedback.js';
import { healthRoutes } from './routes/health.js';
import { replyRoutes } from './routes/replies.js';
import { sessionRoutes } from './routes/session.js';
import { Runs } from './runs.js';
import { MemoryStore } from './store.js';
import { Tokens } from './tokens.js';
import { ConversationUpdates } from './updates.js';

export interface Backend {
  /**
   * Serves every route under the base path; anything else is a 404 envelope. On Workers, pass the execution
   * context: a reply goes on after its request through its `waitUntil`.
   */
  fetch(request: Request, env?: unknown, executionCtx?: unknown): Promise<Response>;
  /** Where the routes are mounted, e.g. `/persona-chat`. */
  readonly basePath: string;
  /**
   * Reads and checks the configuration now, and throws a ConfigError naming the first bad setting. Without it, the
   * configuration is read on the first request (so that a build can import the backend without its secrets), and a
   * bad one answers every request with a 500 envelope and a `config_error` log line.
   */
  check(): void;
  /**
   * Stops taking new replies (`/readyz` says `draining`), lets the replies this instance is producing finish for up
   * to `graceMs`, then ends the rest with `server_restarting`: the browser sends them again, to another instance.
   * Resolves once the conversations' background writes (a name from the first message, a reply's citations) have
   * ended too, or after 5 s more.
   */
  drain(graceMs: number): Promise<void>;
  /** Ends the replies this instance is producing (as `interrupted`, retryable) and closes connections to the service. */
  close(): void;
}

/** How long a drain waits for the background writes to conversations, once the replies have ended. */
const settlesMs = 5000;

/**
 * Makes the backend. The configuration is read when the first request arrives, or on `check()`: importing a module
 * that makes the backend (a route handler in a build, say) needs none of its secrets.
 */
export function createBackend(config: BackendConfig): Backend {
  let assembled: Assembled | undefined;
  let reported = '';
  const assemble = () => (assembled ??= assembleBackend(config));
  return {
    fetch: async (request, env, executionCtx) => {
      let backend: Assembled;
      try {
        backend = assemble();
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        // Reported on stderr once per problem; every request until it is fixed is logged with its code.
        if (error.message !== reported) console.error((reported = error.message));
        return misconfigured(request, error, config?.log ?? defaultLog);
      }
      return backend.fetch(request, env, executionCtx);
    },
    get basePath() {
      return resolveBasePath(config?.basePath);
    },
    check: () => void assemble(),
    drain: async graceMs => assembled?.drain(graceMs),
    close: () => assembled?.close(),
  };
}

const defaultLog = (line: LogLine) => console.log(JSON.stringify(line));

/** The answer to every request while the configuration is wrong: a 500 envelope, and a log line saying why. */
function misconfigured(request: Request, error: ConfigError, log: (line: LogLine) => void): Response {
  const requestId = crypto.randomUUID();
  const failure = new HttpError(500, 'internal_error', 'The chat is not set up correctly on this server.', {
    retryable: false,
  });
  log({
    time: new Date().toISOString(),
    level: 'error',
    requestId,
    method: request.method,
    path: new URL(request.url).pathname,
    status: 500,
    durationMs: 0,
    code: 'config_error',
    detail: error.message,
  });
  return Response.json(failure.envelope(requestId), {
    status: 500,
    headers: { 'cache-control': 'no-store', 'x-request-id': requestId },
  });
}

type Assembled = Pick<Backend, 'fetch' | 'drain' | 'close'>;

/** Checks the configuration and puts the backend together. Throws a ConfigError naming the setting. */
function assembleBackend(config: BackendConfig): Assembled {
  const settings = resolveConfig(config);
  const { limits, basePath } = settings;
  const store = config.store ?? new MemoryStore();
  const log = config.log ?? defaultLog;
  const service = new ServiceClient({
    baseUrl: settings.serviceUrl,
    http2BaseUrl: settings.http2ServiceUrl,
    apiKey: settings.apiKey,
    apiKeyHeader: settings.apiKeyHeader,
    routes: settings.routes,
    fetch: config.fetch,
    http2Fetch: config.http2Fetch,
    timeouts: config.timeouts,
    acceptUnmarkedEnd: config.acceptUnmarkedEnd === true,
  });
  const secrets = [settings.apiKey];
  /** Failures that no request is there to hear go to stderr, without secrets. */
  const report = (what: string, error: unknown) => {
    const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    console.error(`persona-chat backend: ${what}: ${redact(cause, secrets).slice(0, 500)}`);
  };
  const runs = new Runs({
    store,
    leaseMs: settings.leaseMs,
    limits: {
      replayWindowMs: limits.replayWindowSeconds * 1000,
      eventsPerRun: limits.eventsPerRun,
      bytesPerRun: limits.bytesPerRun,
      runsPerConversation: limits.runsPerConversation,
    },
    open: (conversationId, message, signal) =>
      service.openReplyBatches(conversationId, message, settings.delivery, { signal }).catch(error => {
        // The conversation is gone at the service (deleted there): the same 404 as any unknown conversation.
        throw error instanceof ServiceError && error.status === 404 ? notFound() : error;
      }),
    history: async (conversationId, signal) =>
      (await service.getConversation(conversationId, { signal })).chatMessages ?? [],
    // A reply could not be written to the store (it ends for its readers).
    onError: error => report('a reply failed in the store', error),
    // The store keeps a reply for its replay window only: its sources are kept with the conversation.
    onDone: ({ conversationId }, { messageId }, citations) =>
      messageId && citations.length ? updates.keepCitations(conversationId, messageId, citations) : undefined,
    // A stopped or failed reply leaves no message at the service: how it ended is kept with the conversation.
    onOutcome: ({ conversationId, key }, outcome) => updates.keepOutcome(conversationId, key, outcome),
  });
  const updates = new ConversationUpdates({ service, onError: report });
  const noteRefusal = refusalNotes();
  const parts: Parts = {
    config,
    settings,
    service,
    store,
    tokens: new Tokens(settings.tokenSecret, { ttlSeconds: settings.tokenTtlSeconds }),
    ownership: new Ownership(service),
    runs,
    updates,
    limiter: new Limiter(store, settings, config.clientIp),
    secrets,
    report,
    allowsOrigin: origin => {
      if (!origin) return false;
      if (settings.allowsOrigin(origin)) return true;
      noteRefusal(origin);
      return false;
    },
  };

  const root = new Hono<Env>();
  const app = basePath === '/' ? root : root.basePath(basePath);

  // Before the request log: probes every few seconds would drown the lines that matter.
  app.route('/', healthRoutes(parts));
  app.use('*', requestId(), requestLog({ log }));
  // Around the CORS middleware, which says Vary: Origin on its own routes: every other answer says it once too.
  app.use('*', async function varyOrigin(c, next) {
    await next();
    if (!c.res.headers.get('vary')?.includes('Origin')) c.res.headers.append('Vary', 'Origin');
  });
  app.use(
    '/session',
    cors({
      allowOrigin: parts.allowsOrigin,
      credentials: true,
      allowMethods: ['POST'],
      allowHeaders: ['Content-Type', csrfHeader],
      maxAge: 600,
    }),
  );
  app.use(
    '/conversations/*',
    cors({
      allowOrigin: parts.allowsOrigin,
      allowMethods: ['GET', 'POST', 'PATCH', 'DELETE'],
      allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'Accept', 'Last-Event-ID', resendHeader],
      exposeHeaders: ['Retry-After', 'X-Request-Id'],
      maxAge: 600,
    }),
  );
  const tooLarge = () => {
    // The body is refused unread, and a client may stop sending it once it has the answer: the connection cannot
    // carry another request, so it closes after this one rather than being reused and cut under the next.
    throw new HttpError(413, 'payload_too_large', `The request body is larger than ${limits.bodyMaxBytes} bytes.`, {
      retryable: false,
      headers: { connection: 'close' },
    });
  };
  const limitStreamedBody = bodyLimit({ maxSize: limits.bodyMaxBytes, onError: tooLarge });
  app.use('*', async function limitBody(c, next) {
    // A body of a stated length is judged by that length (the HTTP parser reads no more of it), which leaves it to
    // be read at once rather than as a stream; a body without one is counted as it streams in.
    const { method } = c.req;
    if (method === 'GET' || method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length === undefined || c.req.header('transfer-encoding') !== undefined) return limitStreamedBody(c, next);
    if (Number.parseInt(length, 10) > limits.bodyMaxBytes) tooLarge();
    return next();
  });
  // Everything but the token exchange takes the bearer token, never a cookie.
  app.use('/conversations/*', bearerToken({ tokens: parts.tokens }));

  app.route('/', sessionRoutes(parts));
  app.route('/', conversationRoutes(parts));
  app.route('/', replyRoutes(parts));
  app.route('/', feedbackRoutes(parts));

  const handlers = errorHandlers(secrets);
  root.notFound(handlers.notFound);
  root.onError(handlers.onError);

  return {
    fetch: (request, env, executionCtx) => {
      noteExecutionCtx(request, executionCtx);
      return Promise.resolve(root.fetch(request, env, executionCtx as never));
    },
    drain: async graceMs => {
      await runs.drain(graceMs);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise(resolve => (timer = setTimeout(resolve, settlesMs)));
      await Promise.race([updates.settled(), bound]);
      clearTimeout(timer);
    },
    close: () => {
      runs.close();
      service.close();
    },
  };
}
