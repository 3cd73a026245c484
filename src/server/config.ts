/**
 * @module
 * The backend's configuration, checked once, on the backend's first request or its `check()`: a bad setting throws
 * an Error that names it (and the command-line flag and environment variable that set it), so a misconfigured CLI
 * server never starts and a misconfigured handler answers nothing but a 500.
 */
import { messageMaxLength } from '../protocol.js';
import type { Timeouts } from '../service/client.js';
import type { StoredFeedback } from './annotations.js';
import { OriginListError, originPolicy } from './origins.js';
import type { BackendStore } from './store.js';

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface Limits {
  /** Longest message, in characters. Default 4,000. */
  messageMaxLength: number;
  /** Largest request body, in bytes, with or without a Content-Length. Default 32 KiB. */
  bodyMaxBytes: number;
  /** Messages one user may send a minute. Default 20. */
  messagesPerUserPerMinute: number;
  /** Messages one IP address may send a minute. Default 60. */
  messagesPerIpPerMinute: number;
  /**
   * Sessions (token requests) one IP address may make a minute. Default 600: a whole office, school or mobile
   * carrier can share one address, and a session costs no call to the service, so this only stops floods.
   */
  sessionsPerIpPerMinute: number;
  /** Sessions one visitor (their cookie, or the site's user) may make a minute. Default 60. */
  sessionsPerVisitorPerMinute: number;
  /**
   * Conversations one user may start a minute. Default 10: the widget starts one with a visitor's first message,
   * and a visitor starting more than a few in a minute is a script.
   */
  conversationsPerUserPerMinute: number;
  /**
   * Reads of a conversation (`GET /conversations/:id`) one user may make a minute. Default 120: the widget reads
   * one when a page opens, so only a script reads two a second.
   */
  conversationReadsPerUserPerMinute: number;
  /** Feedback one user may give a minute (each costs a read and a write of the conversation). Default 30. */
  feedbackPerUserPerMinute: number;
  /** Replies one user may have in progress at once (being produced, whoever follows them). Default 2. */
  concurrentStreamsPerUser: number;
  /** How long a reply's run is kept for re-attaching and replay after its last event. Default 600 s. */
  replayWindowSeconds: number;
  /** Most events one reply's log holds; past that, text is kept in bigger pieces. At least 100. Default 4,000. */
  eventsPerRun: number;
  /** Most bytes of text one reply keeps; a longer reply ends there (`finishReason: "length"`). Default 256 KiB. */
  bytesPerRun: number;
  /** Replies each conversation keeps in the replay window. Default 50. */
  runsPerConversation: number;
}

export const defaultLimits: Limits = {
  messageMaxLength,
  bodyMaxBytes: 32 * 1024,
  messagesPerUserPerMinute: 20,
  messagesPerIpPerMinute: 60,
  sessionsPerIpPerMinute: 600,
  sessionsPerVisitorPerMinute: 60,
  conversationsPerUserPerMinute: 10,
  conversationReadsPerUserPerMinute: 120,
  feedbackPerUserPerMinute: 30,
  concurrentStreamsPerUser: 2,
  replayWindowSeconds: 600,
  eventsPerRun: 4000,
  bytesPerRun: 256 * 1024,
  runsPerConversation: 50,
};

/** One line per request. Never carries a token, a cookie or the API key. */
export interface LogLine {
  time: string;
  level: 'info' | 'warn' | 'error';
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  /** Our error code for a failed request; `client_closed` (status 499) when the client went away before its answer. */
  code?: string;
  /**
   * For replies streamed as SSE, how the stream ended: the reply was `done`, `stopped` or ended in an `error`; the
   * browser went away while the reply went on (`detached`); or a new attempt of the reply began (`restarted`).
   */
  outcome?: 'done' | 'stopped' | 'error' | 'detached' | 'restarted';
  /** For failures inside the backend or the service: what happened, without secrets. */
  detail?: string;
}

export interface BackendConfig {
  /** The Conversation Service's base URL. */
  serviceUrl: string;
  /** Where the service's HTTP/2 listener is, if it differs from `serviceUrl`. */
  http2ServiceUrl?: string;
  /** The service's API key. Lives only in this process and its requests to the service. */
  apiKey: string;
  /** The header that carries the key. Default `x-svc-api-key`. */
  apiKeyHeader?: string;
  /** Continue paths: `auto` (default), `chat` (form B) or `continue` (form A). */
  routes?: 'auto' | 'chat' | 'continue';
  /** How replies come from the service: `sse` (default), `http2` or `json`. */
  delivery?: 'sse' | 'http2' | 'json';
  /** The persona(s) served; the first is the default. Or give `system` and `model` for general conversations. */
  personaId?: string | string[];
  system?: string;
  model?: string;
  /** Signs tokens and anonymous cookies: at least 32 bytes. */
  tokenSecret: string;
  /** Token lifetime in seconds, 120 to 86,400. Default 600. */
  tokenTtlSeconds?: number;
  /**
   * The origins (scheme://host[:port]) whose pages may use this backend, exact, or patterns of subdomains:
   * `https://*.example.com` allows `https://a.example.com` and `https://a.b.example.com` (never `example.com` itself,
   * another scheme or another port). No other wildcard is taken.
   */
  allowedOrigins: string[];
  /** Where the routes are mounted. Default `/`. */
  basePath?: string;
  /** How many proxies in front of this server to trust for X-Forwarded-For (true = 1). Default none. */
  trustProxy?: boolean | number;
  /**
   * The site's own user for a request (from its session cookie or headers), as a stable id, or null for an
   * anonymous visitor. Without it, every visitor is anonymous.
   */
  identify?: (request: Request) => string | null | undefined | Promise<string | null | undefined>;
  /**
   * The client's address, where the runtime knows it better than the socket (on Workers, the
   * `CF-Connecting-IP` header). Default: the socket's address on Node, or X-Forwarded-For through
   * `trustProxy`. Without an address, only the per-user limits apply.
   */
  clientIp?: (request: Request) => string | null | undefined;
  /**
   * The anonymous-visitor cookie. `secure: 'auto'` (default) sets Secure when the request came over HTTPS.
   * `sameSite` is `lax` (default) while the backend is on the same site as the pages (`www.example.com` and
   * `chat.example.com` are one site); a backend on another site needs `none`, which also sets `Secure` and
   * `Partitioned` (browsers that block third-party cookies keep a partitioned one, for that page's site only).
   */
  cookie?: { name?: string; secure?: boolean | 'auto'; maxAgeSeconds?: number; sameSite?: 'lax' | 'strict' | 'none' };
  limits?: Partial<Limits>;
  /** Timeouts for the service: connect, first byte, idle between chunks, total. */
  timeouts?: Partial<Timeouts>;
  /**
   * Takes a reply stream from the service that ends without a marked end (`[DONE]`, a done event, a finish reason)
   * as complete. Unsafe behind any proxy or load balancer that may end a response cleanly in its middle: a truncated
   * reply is then shown and kept as complete. Only for a service that never marks the end. Default false: such a
   * reply fails as retryable, and the service's history is checked before it is asked again.
   */
  acceptUnmarkedEnd?: boolean;
  /**
   * Tells the browser each reply's token counts, as the service counted them: `usage` on the reply stream's `done`
   * and in the JSON reply. Default false: the counts stay in the backend, as the rest of what the service says about
   * a conversation does (its externalUserId, its configuration); a page has no use for them, and they would tell
   * anyone with the page open how large the persona's instructions and sources are.
   */
  exposeUsage?: boolean;
  /** Interval of `: ping` comments on reply streams. Default 15,000 ms. */
  pingIntervalMs?: number;
  /** Where limits and the runs of replies live. Default: in memory, for one instance. */
  store?: BackendStore;
  /**
   * How long the instance producing a reply may go silent before the reply counts as interrupted (its instance
   * died): its lease in the store, renewed every third of it. Default 15 s.
   */
  leaseSeconds?: number;
  /** The transport to the service. Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** The transport for the HTTP/2 delivery. Default: node:http2, loaded when first needed. */
  http2Fetch?: FetchLike;
  /** Where log lines go. Default: one JSON line on stdout. */
  log?: (line: LogLine) => void;
  /**
   * Told once about every feedback the backend accepted and kept, and about every one taken back (`score` 0), for
   * the site's own records (analytics, a ticket). It does not hold up the answer; a promise it returns is awaited
   * in the background (through `waitUntil` on Workers), and a failure, thrown or rejected, is reported on stderr and
   * fails nothing.
   */
  onFeedback?: (event: FeedbackEvent) => void | Promise<unknown>;
}

/** What `onFeedback` is told. */
export interface FeedbackEvent {
  conversationId: string;
  /** The reply the feedback is about. */
  messageId: string;
  /** The visitor: the externalUserId of the conversation. */
  userId: string;
  /** The persona of the conversation; null for a general one. */
  personaId: string | null;
  /**
   * As kept in the conversation's metadata: the interface's Feedback fields. A `score` of 0 says the visitor took
   * their feedback on the reply back: nothing is kept for it any more.
   */
  feedback: StoredFeedback;
}

/** `messageMaxLength` → `message-max-length`. */
const kebabCase = (name: string) => name.replace(/[A-Z]/g, letter => `-${letter.toLowerCase()}`);

/** The environment variable of a command-line flag: `--api-key` → `PERSONA_CHAT_API_KEY`. */
export const envOfFlag = (flag: string) => `PERSONA_CHAT_${flag.toUpperCase().replace(/-/g, '_')}`;

/** The command-line flag of each limit: its name in kebab case (`--message-max-length`). */
export const limitFlags = Object.fromEntries(Object.keys(defaultLimits).map(name => [name, kebabCase(name)])) as Record<
  keyof Limits,
  string
>;

/** The command-line flag of each timeout to the service: `--connect-timeout-ms` for `timeouts.connectMs`. */
export const timeoutFlags: Record<keyof Timeouts, string> = {
  connectMs: 'connect-timeout-ms',
  firstByteMs: 'first-byte-timeout-ms',
  idleMs: 'idle-timeout-ms',
  totalMs: 'total-timeout-ms',
};

const flagAndEnv = (flag: string) => `--${flag} / ${envOfFlag(flag)}`;

/** The command-line flag and environment variable behind each setting, for error messages. */
const sources: Partial<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(limitFlags).map(([name, flag]) => [`limits.${name}`, flagAndEnv(flag)])),
  ...Object.fromEntries(Object.entries(timeoutFlags).map(([name, flag]) => [`timeouts.${name}`, flagAndEnv(flag)])),
  pingIntervalMs: flagAndEnv('ping-interval-ms'),
  serviceUrl: '--service-url / PERSONA_CHAT_SERVICE_URL',
  http2ServiceUrl: '--http2-service-url / PERSONA_CHAT_HTTP2_SERVICE_URL',
  apiKey: '--api-key / PERSONA_CHAT_API_KEY',
  apiKeyHeader: '--api-key-header / PERSONA_CHAT_API_KEY_HEADER',
  routes: '--routes / PERSONA_CHAT_ROUTES',
  delivery: '--delivery / PERSONA_CHAT_DELIVERY',
  personaId: '--persona-id / PERSONA_CHAT_PERSONA_ID',
  system: '--system / PERSONA_CHAT_SYSTEM',
  model: '--model / PERSONA_CHAT_MODEL',
  tokenSecret: '--token-secret / PERSONA_CHAT_TOKEN_SECRET',
  tokenTtlSeconds: '--token-ttl / PERSONA_CHAT_TOKEN_TTL',
  allowedOrigins: '--allowed-origin / PERSONA_CHAT_ALLOWED_ORIGIN',
  basePath: '--base-path / PERSONA_CHAT_BASE_PATH',
  trustProxy: '--trust-proxy / PERSONA_CHAT_TRUST_PROXY',
  leaseSeconds: '--lease-seconds / PERSONA_CHAT_LEASE_SECONDS',
  'cookie.sameSite': '--cookie-same-site / PERSONA_CHAT_COOKIE_SAME_SITE',
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly setting: string,
    problem: string,
  ) {
    const source = sources[setting];
    super(`persona-chat backend: "${setting}"${source ? ` (${source})` : ''} ${problem}`);
  }
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function httpUrl(setting: string, value: string | undefined): string {
  if (!value) throw new ConfigError(setting, 'is required');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(setting, `must be an http(s) URL, not "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(setting, 'must be an http(s) URL');
  return value.replace(/\/+$/, '');
}

function positiveInteger(setting: string, value: number, max = Number.MAX_SAFE_INTEGER, min = 1): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(setting, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

export interface ResolvedConfig {
  serviceUrl: string;
  http2ServiceUrl: string;
  apiKey: string;
  apiKeyHeader: string;
  routes: 'auto' | 'chat' | 'continue';
  delivery: 'sse' | 'http2' | 'json';
  personaIds: string[];
  general: { system: string; model: string } | null;
  tokenSecret: Uint8Array;
  tokenTtlSeconds: number;
  /** Whether an Origin header names a page allowed to use the backend. */
  allowsOrigin: (origin: string) => boolean;
  basePath: string;
  trustedHops: number;
  cookie: { name: string; secure: boolean | 'auto'; maxAgeSeconds: number; sameSite: 'lax' | 'strict' | 'none' };
  limits: Limits;
  pingIntervalMs: number;
  leaseMs: number;
  /** Whether the browser is told each reply's token counts. */
  exposeUsage: boolean;
}

/** The base path, checked: `/` by default, without a trailing slash. */
export function resolveBasePath(value: string | undefined): string {
  if (value !== undefined && typeof value !== 'string') {
    throw new ConfigError('basePath', 'must be a path like /persona-chat');
  }
  const basePath = (value ?? '/').replace(/\/+$/, '') || '/';
  if (!basePath.startsWith('/') || /\/\.\.?(\/|$)|[?#\s]/.test(basePath)) {
    throw new ConfigError('basePath', `must be a path like /persona-chat, not "${value}"`);
  }
  return basePath;
}

/** Checks every setting and fills in the defaults. */
export function resolveConfig(config: BackendConfig): ResolvedConfig {
  if (!config || typeof config !== 'object') throw new ConfigError('config', 'must be an object');
  const serviceUrl = httpUrl('serviceUrl', config.serviceUrl);
  const http2ServiceUrl = config.http2ServiceUrl ? httpUrl('http2ServiceUrl', config.http2ServiceUrl) : serviceUrl;
  if (!config.apiKey) throw new ConfigError('apiKey', 'is required');
  const apiKeyHeader = config.apiKeyHeader ?? 'x-svc-api-key';
  if (!/^[A-Za-z0-9-]+$/.test(apiKeyHeader)) throw new ConfigError('apiKeyHeader', 'must be a header name');
  const routes = config.routes ?? 'auto';
  if (!['auto', 'chat', 'continue'].includes(routes)) throw new ConfigError('routes', 'must be auto, chat or continue');
  const delivery = config.delivery ?? 'sse';
  if (!['sse', 'http2', 'json'].includes(delivery)) throw new ConfigError('delivery', 'must be sse, http2 or json');

  const personaIds = [config.personaId ?? []].flat().filter(Boolean);
  for (const id of personaIds) if (!uuid.test(id)) throw new ConfigError('personaId', `must be a UUID, not "${id}"`);
  const general = config.system || config.model ? { system: config.system ?? '', model: config.model ?? '' } : null;
  if (personaIds.length && general) throw new ConfigError('personaId', 'and system/model cannot both be set');
  if (general && !general.system) throw new ConfigError('system', 'is required with model');
  if (general && !general.model) throw new ConfigError('model', 'is required with system');
  if (!personaIds.length && !general) throw new ConfigError('personaId', 'is required (or system and model)');

  if (!config.tokenSecret) throw new ConfigError('tokenSecret', 'is required');
  const tokenSecret = new TextEncoder().encode(config.tokenSecret);
  if (tokenSecret.length < 32) throw new ConfigError('tokenSecret', 'must be at least 32 bytes long');
  // The element asks for a new token once less than 60 s of its token are left: a token of 120 s serves a minute,
  // and one under 60 s none at all, so that every request is a token exchange until the exchanges meet 429s.
  const tokenTtlSeconds = positiveInteger('tokenTtlSeconds', config.tokenTtlSeconds ?? 600, 86_400, 120);

  let allowsOrigin: (origin: string) => boolean;
  try {
    allowsOrigin = originPolicy(config.allowedOrigins ?? []);
  } catch (error) {
    if (error instanceof OriginListError) throw new ConfigError('allowedOrigins', error.message);
    throw error;
  }

  const basePath = resolveBasePath(config.basePath);
  const trust = config.trustProxy ?? false;
  const trustedHops = trust === true ? 1 : trust === false ? 0 : trust;
  if (!Number.isInteger(trustedHops) || trustedHops < 0 || trustedHops > 10) {
    throw new ConfigError('trustProxy', 'must be true, false or a number of proxies from 0 to 10');
  }

  const limits = { ...defaultLimits, ...config.limits };
  for (const [name, value] of Object.entries(limits)) positiveInteger(`limits.${name}`, value);
  if (limits.eventsPerRun < 100) throw new ConfigError('limits.eventsPerRun', 'must be at least 100');
  const cookieName = config.cookie?.name ?? 'persona_chat_visitor';
  if (!/^[A-Za-z0-9_-]+$/.test(cookieName)) throw new ConfigError('cookie.name', 'must be a cookie name');
  const sameSite = config.cookie?.sameSite ?? 'lax';
  if (!['lax', 'strict', 'none'].includes(sameSite))
    throw new ConfigError('cookie.sameSite', 'must be lax, strict or none');
  if (sameSite === 'none' && config.cookie?.secure === false) {
    throw new ConfigError('cookie.secure', 'cannot be false with sameSite none: browsers drop such a cookie');
  }
  const pingIntervalMs = positiveInteger('pingIntervalMs', config.pingIntervalMs ?? 15_000);
  for (const [name, value] of Object.entries(config.timeouts ?? {})) {
    if (value !== undefined) positiveInteger(`timeouts.${name}`, value);
  }
  const leaseSeconds = config.leaseSeconds ?? 15;
  if (!Number.isInteger(leaseSeconds) || leaseSeconds < 3 || leaseSeconds > 300) {
    throw new ConfigError('leaseSeconds', 'must be a whole number of seconds from 3 to 300');
  }

  return {
    serviceUrl,
    http2ServiceUrl,
    apiKey: config.apiKey,
    apiKeyHeader,
    routes,
    delivery,
    personaIds,
    general,
    tokenSecret,
    tokenTtlSeconds,
    allowsOrigin,
    basePath,
    trustedHops,
    cookie: {
      name: cookieName,
      secure: config.cookie?.secure ?? 'auto',
      maxAgeSeconds: positiveInteger('cookie.maxAgeSeconds', config.cookie?.maxAgeSeconds ?? 30 * 86_400),
      sameSite,
    },
    limits,
    pingIntervalMs,
    leaseMs: leaseSeconds * 1000,
    exposeUsage: config.exposeUsage === true,
  };
}
