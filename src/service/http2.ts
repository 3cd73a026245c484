/**
 * @module
 * A `fetch`-shaped function that speaks real HTTP/2 through node:http2: cleartext `http://` URLs use prior
 * knowledge (h2c), `https://` URLs negotiate h2 over TLS. One session per origin is kept and reused; it holds the
 * process open only while a request is in flight.
 */
import type * as Http2 from 'node:http2';
import type { ClientSessionOptions, SecureClientSessionOptions } from 'node:http2';

/**
 * node:http2, imported on the first request rather than by this module: a bundle for a runtime without it (Workers,
 * Deno or Bun without Node compatibility) then holds only a dynamic import that never runs.
 */
let nodeHttp2: Promise<typeof Http2> | undefined;
const loadHttp2 = () => (nodeHttp2 ??= import('node:http2'));

export type Http2Fetch = ((input: string | URL | Request, init?: RequestInit) => Promise<Response>) & {
  /** Closes every open session. */
  close(): void;
  /** How many sessions are open (one per origin while in use). */
  readonly openSessions: number;
};

interface Entry {
  session: Http2.ClientHttp2Session;
  active: number;
}

const hopByHop = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host']);

/** Makes an HTTP/2 fetch. `connectOptions` go to `http2.connect` (for instance `ca` for a private certificate). */
export function createHttp2Fetch(connectOptions: ClientSessionOptions | SecureClientSessionOptions = {}): Http2Fetch {
  const sessions = new Map<string, Entry>();

  const sessionFor = (http2: typeof Http2, origin: string): Entry => {
    const existing = sessions.get(origin);
    if (existing && !existing.session.closed && !existing.session.destroyed) return existing;
    const session = http2.connect(origin, connectOptions);
    const entry: Entry = { session, active: 0 };
    session.unref();
    const forget = () => {
      if (sessions.get(origin) === entry) sessions.delete(origin);
    };
    session.on('close', forget);
    session.on('error', forget);
    session.on('goaway', forget);
    sessions.set(origin, entry);
    return entry;
  };

  const h2fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request = new Request(input, init);
    request.signal.throwIfAborted();
    const url = new URL(request.url);
    const http2 = await loadHttp2();
    request.signal.throwIfAborted();
    const entry = sessionFor(http2, url.origin);
    const headers: Http2.OutgoingHttpHeaders = {
      ':method': request.method,
      ':path': url.pathname + url.search,
      ':scheme': url.protocol.replace(':', ''),
      ':authority': url.host,
    };
    request.headers.forEach((value, key) => {
      if (!hopByHop.has(key)) headers[key] = value;
    });
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;

    return new Promise<Response>((resolve, reject) => {
      entry.active++;
      entry.session.ref();
      let settled = false;
      const release = () => {
        if (settled) return;
        settled = true;
        request.signal.removeEventListener('abort', onAbort);
        if (--entry.active === 0) entry.session.unref();
      };
      const stream = entry.session.request(headers, { endStream: !body });
      let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
      let failBody: (error: unknown) => void = () => {};
      const onAbort = () => {
        stream.close(http2.constants.NGHTTP2_CANCEL);
        const reason: unknown = request.signal.reason ?? new DOMException('Aborted', 'AbortError');
        failBody(reason);
        reject(reason);
        release();
      };
      request.signal.addEventListener('abort', onAbort, { once: true });
      stream.on('error', error => {
        failBody(error);
        reject(error);
        release();
      });
      stream.on('close', () => {
        // A stream reset by the peer ends without 'end': no response, or an incomplete body.
        const error = new Error(`The HTTP/2 stream closed early (code ${stream.rstCode}).`);
        failBody(error);
        reject(error);
        release();
      });
      stream.on('response', responseHeaders => {
        const status = Number(responseHeaders[':status']);
        const out = new Headers();
        for (const [key, value] of Object.entries(responseHeaders)) {
          if (key.startsWith(':') || value === undefined) continue;
          out.set(key, Array.isArray(value) ? value.join(', ') : String(value));
        }
        const nullBody = status === 204 || status === 304 || request.method === 'HEAD';
        let open = true;
        const readable = new ReadableStream<Uint8Array>({
          start(c) {
            controller = c;
            stream.on('data', (chunk: Buffer) => {
              if (!open) return;
              c.enqueue(new Uint8Array(chunk));
              if ((c.desiredSize ?? 1) <= 0) stream.pause();
            });
            stream.on('end', () => {
              if (open) c.close();
              open = false;
              release();
            });
          },
          pull() {
            stream.resume();
          },
          cancel() {
            open = false;
            stream.close(http2.constants.NGHTTP2_CANCEL);
            release();
          },
        });
        const fail = (error: unknown) => {
          if (open) controller?.error(error);
          open = false;
        };
        failBody = fail;
        resolve(new Response(nullBody ? null : readable, { status, headers: out }));
      });
      if (body) stream.end(body);
    });
  };

  return Object.defineProperties(h2fetch, {
    close: {
      value() {
        for (const { session } of sessions.values()) session.close();
        sessions.clear();
      },
    },
    openSessions: { get: () => sessions.size },
  }) as Http2Fetch;
}
