/**
 * @module
 * The persona-chat backend: `createBackend(config)` returns a web-standard `fetch` handler serving the token exchange
 * and the proxy routes `<persona-chat>` uses. Node helpers (a server, Express/Connect middleware) are in `./node.js`;
 * the Redis store for several instances is in `./redis-store.js` (`persona-chat/server/redis`), apart so that
 * runtimes without TCP never load its client. `insights(options)` is the site owner's report over the service's
 * conversations (`persona-chat-server insights` on the command line).
 */
export { createBackend } from './app.js';
export type { Backend } from './app.js';
export { ConfigError, defaultLimits } from './config.js';
export type { BackendConfig, FeedbackEvent, Limits, LogLine } from './config.js';
export type { StoredFeedback } from './annotations.js';
export { HttpError } from './errors.js';
export { InsightsError, formatInsights, insights } from './insights/index.js';
export type { Insights, InsightsFormat, InsightsOptions, Progress as InsightsProgress } from './insights/index.js';
export { MemoryStore, StoreUnavailableError } from './store.js';
export type {
  BackendStore,
  CreateRunOptions,
  CreatedRun,
  LoggedEvent,
  RunRecord,
  RunStore,
  WindowHit,
} from './store.js';
export type * from '../protocol.js';
