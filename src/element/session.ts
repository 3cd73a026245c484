/**
 * @module
 * The session token, single-flight. The elements of a page that talk to one endpoint share one request for it and
 * one token, and `/session` calls are taken one at a time across the tabs of a site (the Web Locks API; within the
 * page only where it is missing), so that a first visit with two widgets or two tabs mints one anonymous visitor:
 * the second call goes out with the cookie the first one set.
 */
import { csrfHeader } from '../protocol.js';
import type { SessionResponse } from '../protocol.js';
import { errorFromResponse, networkError } from './errors.js';

export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

export interface Session {
  token: string;
  expiresAt: number;
  userKey: string;
}

/** Refresh a token this long before it expires. */
const refreshMarginMs = 60_000;

const sessions = new Map<string, Session>();
const requests = new Map<string, Promise<Session>>();
const chains = new Map<string, Promise<unknown>>();

/** Runs `work` holding the lock `name` across the site's tabs, or within this page where Web Locks are missing. */
export function withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (locks?.request) return locks.request(name, work) as Promise<T>;
  // The chain of a name stays (a settled promise), as the names are few: one per endpoint and conversation key.
  const run = (chains.get(name) ?? Promise.resolve()).then(work, work);
  chains.set(
    name,
    run.catch(() => {}),
  );
  return run;
}

/**
 * A token for `personaId` at `endpoint`: the shared one while it has a minute left, else a new one. `stale` is a
 * token the backend just refused as expired: a new one is fetched unless another element already did.
 */
export function session(fetch: FetchLike, endpoint: string, personaId: string, stale?: string): Promise<Session> {
  const key = `${endpoint}\n${personaId}`;
  const known = sessions.get(key);
  if (known && known.token !== stale && known.expiresAt - Date.now() > refreshMarginMs) return Promise.resolve(known);
  let request = requests.get(key);
  if (!request) {
    request = withLock(`persona-chat session ${new URL(endpoint, document.baseURI).href}`, () =>
      newSession(fetch, endpoint, personaId),
    ).finally(() => requests.delete(key));
    requests.set(key, request);
    void request.then(
      got => sessions.set(key, got),
      () => {},
    );
  }
  return request;
}

async function newSession(fetch: FetchLike, endpoint: string, personaId: string): Promise<Session> {
  let response: Response;
  try {
    response = await fetch(`${endpoint}/session`, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/json', [csrfHeader]: '1' },
      body: JSON.stringify({ personaId: personaId || undefined }),
      // A stalled request would hold the lock every tab waits on.
      signal: AbortSignal.timeout(20_000),
    });
  } catch (error) {
    throw networkError(error);
  }
  if (!response.ok) throw await errorFromResponse(response);
  const body = (await response.json()) as SessionResponse;
  return { token: body.token, expiresAt: Date.parse(body.expiresAt), userKey: body.user.key };
}
