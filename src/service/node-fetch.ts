/**
 * @module
 * A `fetch`-shaped function over node:http and node:https with kept-alive connections: the client's transport on
 * Node when none is given. Node's own fetch (undici) builds a Request, a Response, a chain of web streams and abort
 * wiring of its own for every call, which is most of what a streamed reply costs the backend in CPU and in memory
 * while it is open; this sends the request as it is and hands the response's bytes on as they come. It does what
 * the client asks of fetch and no more: a string or byte body, plain headers, no redirects (a 3xx is answered as it
 * is, as with `redirect: 'manual'`), no decompression (it asks for none), no cookies, no cache. Anything else, a
 * Request object included, goes to the runtime's fetch.
 */
import type * as Http from 'node:http';
import type * as Https from 'node:https';

export type NodeFetch = ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) & {
  /** Closes the kept-alive connections. */
  close(): void;
};

/** The statuses whose response has no body, which a Response refuses one for. */
const nullBodyStatuses = new Set([101, 103, 204, 205, 304]);

/**
 * How long an idle connection is kept for the next request: less than the 5 s after which Node's servers close one,
 * so that a request is not sent on a connection the server is closing.
 */
const idleMs = 4000;

/** node:http and node:https, imported on the first request so that loading this module needs neither. */
let modules: Promise<[typeof Http, typeof Https]> | undefined;
const load = () => (modules ??= Promise.all([import('node:http'), import('node:https')]));

/** Makes a Node transport, with agents of its own that keep connections alive. */
export function createNodeFetch(): NodeFetch {
  let agents: { http: Http.Agent; https: Https.Agent } | undefined;

  const nodeFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    const plain = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    if (input instanceof Request || !plain || !isPlainHeaders(init.headers)) return globalThis.fetch(input, init);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    const url = typeof input === 'string' ? new URL(input) : input;
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return globalThis.fetch(input, init);
    const [http, https] = await load();
    signal?.throwIfAborted();
    agents ??= {
      http: new http.Agent({ keepAlive: true, timeout: idleMs }),
      https: new https.Agent({ keepAlive: true, timeout: idleMs }),
    };
    const secure = url.protocol === 'https:';
    const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) };
    if (body !== undefined && body !== null) headers['content-length'] = String(Buffer.byteLength(body));
    return new Promise<Response>((resolve, reject) => {
      const request = (secure ? https : http).request(url, {
        method: init.method ?? 'GET',
        headers,
        agent: secure ? agents!.https : agents!.http,
      });
      request.on('error', reject);
      // The caller's abort ends the request, and the body under way. One listener, taken off once the request is
      // over: Node's own `signal` option watches the request's end with half a dozen listeners of its own.
      if (signal) {
        const abort = () => request.destroy(signal.reason as Error);
        signal.addEventListener('abort', abort, { once: true });
        request.once('close', () => signal.removeEventListener('abort', abort));
      }
      request.on('response', incoming => {
        const status = incoming.statusCode ?? 0;
        if (status < 200 || status > 599) {
          incoming.destroy();
          return reject(new TypeError(`The service answered with the status ${status}, which fetch does not give.`));
        }
        const responseHeaders = new Headers();
        const raw = incoming.rawHeaders;
        for (let i = 0; i < raw.length; i += 2) responseHeaders.append(raw[i]!, raw[i + 1]!);
        const empty = nullBodyStatuses.has(status) || init.method === 'HEAD';
        if (empty) incoming.resume();
        resolve(
          new (runtimeResponse())(empty ? null : bodyOf(incoming, signal), {
            status,
            statusText: incoming.statusMessage,
            headers: responseHeaders,
          }),
        );
      });
      request.end(body ?? undefined);
    });
  };

  return Object.defineProperty(nodeFetch, 'close', {
    value() {
      agents?.http.destroy();
      agents?.https.destroy();
      agents = undefined;
    },
  }) as NodeFetch;
}

/**
 * The runtime's own Response class, under any subclass put in its place: Hono's Node adapter replaces the global
 * with a stand-in that builds a second, real Response as soon as the body is read.
 */
function runtimeResponse(): typeof Response {
  let base = Response;
  for (;;) {
    const parent: unknown = Object.getPrototypeOf(base);
    if (typeof parent !== 'function' || parent === Function.prototype) return base;
    base = parent as typeof Response;
  }
}

/** Headers given as a plain object of strings, the only kind this transport takes. */
function isPlainHeaders(headers: HeadersInit | undefined): boolean {
  return headers === undefined || (Object.getPrototypeOf(headers) === Object.prototype && !Array.isArray(headers));
}

/**
 * A response's body as a web stream, read as its consumer asks for it: the socket is paused while a piece waits to
 * be read. A body that the connection ends before its end errors the stream, with the signal's reason when the
 * caller aborted (as fetch does).
 */
function bodyOf(incoming: Http.IncomingMessage, signal: AbortSignal | undefined): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const fail = (error: unknown) => {
        if (!open) return;
        open = false;
        controller.error(signal?.aborted ? signal.reason : error);
      };
      // The pieces of one read of the socket go on as one: a streamed reply comes as many small HTTP chunks, each a
      // 'data' event of its own, and every piece handed on costs its reader a step through its pipeline.
      let waiting: Buffer[] = [];
      const handOn = () => {
        if (!open || !waiting.length) return;
        const piece = waiting.length === 1 ? waiting[0]! : Buffer.concat(waiting);
        waiting = [];
        controller.enqueue(new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) incoming.pause();
      };
      incoming.on('data', (chunk: Buffer) => {
        if (!open) return;
        if (!waiting.length) queueMicrotask(handOn);
        waiting.push(chunk);
      });
      incoming.on('end', () => {
        if (!open) return;
        handOn();
        open = false;
        controller.close();
      });
      incoming.on('error', fail);
      // A connection that closes mid-body (a reset, or the request aborted) without an 'error' of its own.
      incoming.on('close', () => fail(new Error('The connection closed before the response was complete.')));
      incoming.pause();
    },
    pull() {
      incoming.resume();
    },
    cancel() {
      open = false;
      incoming.destroy();
    },
  });
}
