/**
 * @module
 * The parts the backend is made of, built once by `createBackend` (app.ts) and handed to every route.
 */
import type { ServiceClient } from '../service/client.js';
import type { BackendConfig, ResolvedConfig } from './config.js';
import type { Limiter } from './limits.js';
import type { Ownership } from './ownership.js';
import type { Runs } from './runs.js';
import type { BackendStore } from './store.js';
import type { Tokens } from './tokens.js';
import type { ConversationUpdates } from './updates.js';

export interface Parts {
  config: BackendConfig;
  settings: ResolvedConfig;
  service: ServiceClient;
  store: BackendStore;
  tokens: Tokens;
  ownership: Ownership;
  runs: Runs;
  updates: ConversationUpdates;
  limiter: Limiter;
  /** Secrets that must never reach a log line. */
  secrets: string[];
  /** Reports a failure no request is there to hear (on stderr, without secrets). */
  report(what: string, error: unknown): void;
  /** Whether an Origin header names an allowed page; a refused origin is told on stderr, once. */
  allowsOrigin(origin: string | undefined): boolean;
}
