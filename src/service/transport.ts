/**
 * @module
 * Which transports the client uses: the one it is given, or on Node itself a kept-alive one over node:http(s)
 * (`node-fetch.ts`), elsewhere the runtime's fetch; and for the HTTP/2 delivery, the one it is given or a node:http2
 * one (`http2.ts`). The Node transports are loaded on first use, so that other runtimes never load them.
 */
import type { NodeFetch } from './node-fetch.js';
import type { FetchLike } from './request.js';

/** The transports of one client, made on first use where it was given none; `close` closes what it made. */
export class Transports {
  /** The transport for everything but the HTTP/2 delivery. */
  readonly fetch: FetchLike;
  /** The Node transport this client made, to close with it. */
  #ownNodeFetch: Promise<NodeFetch | undefined> | undefined;
  #http2Fetch: FetchLike | undefined;
  #ownsHttp2 = false;

  constructor(options: { fetch?: FetchLike; http2Fetch?: FetchLike }) {
    this.fetch = options.fetch ?? (onNode() ? this.#nodeFetch() : (input, init) => globalThis.fetch(input, init));
    this.#http2Fetch = options.http2Fetch;
  }

  /** The transport for the HTTP/2 delivery. */
  async http2(): Promise<FetchLike> {
    if (!this.#http2Fetch) {
      const { createHttp2Fetch } = await import('./http2.js');
      this.#http2Fetch = createHttp2Fetch();
      this.#ownsHttp2 = true;
    }
    return this.#http2Fetch;
  }

  /** Closes the HTTP/2 sessions and the kept-alive connections of the transports made here. */
  close() {
    if (this.#ownsHttp2) (this.#http2Fetch as { close?: () => void } | undefined)?.close?.();
    void this.#ownNodeFetch?.then(transport => transport?.close());
  }

  /**
   * The Node transport, loaded on the first call; the runtime's fetch where it cannot be loaded (a bundle for
   * another runtime that claims to be Node).
   */
  #nodeFetch(): FetchLike {
    const load = () =>
      (this.#ownNodeFetch ??= import('./node-fetch.js').then(
        module => module.createNodeFetch(),
        () => undefined,
      ));
    return async (input, init) => ((await load()) ?? globalThis.fetch)(input, init);
  }
}

/**
 * Whether this is Node itself: Bun and Deno say they are Node too, but their node:http is made over their own fetch,
 * and Workers' may be missing.
 */
function onNode(): boolean {
  const runtime = globalThis as { process?: { versions?: { node?: unknown } }; navigator?: { userAgent?: unknown } };
  return (
    typeof runtime.process?.versions?.node === 'string' &&
    !('Bun' in globalThis) &&
    !('Deno' in globalThis) &&
    runtime.navigator?.userAgent !== 'Cloudflare-Workers'
  );
}
