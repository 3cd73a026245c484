/**
 * A proxy between the backend instances and the service, which records every message the service is asked to answer
 * and can break the reply of a given message: end it cleanly in the middle (`cut-clean`, a proxy that closes
 * instead of resetting), reset its connection (`cut-reset`), or stop forwarding it for longer than the backends'
 * idle timeout (`stall`), after a number of the stream's frames and bytes.
 *
 * What the service does with a reply whose caller went away is `upstream`'s choice: `finish` (the default) reads the
 * service's answer to its end whatever happens downstream, as a service that finishes and keeps every run it
 * started would; `abort` ends the service's request with the caller's, which the emulator answers by keeping
 * nothing of the reply.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endToEnd, readBody } from './http.js';

export type BreakMode = 'cut-clean' | 'cut-reset' | 'stall';

export interface Break {
  mode: BreakMode;
  /** Whole frames of the stream forwarded before the break. */
  frames: number;
  /** Bytes of the next frame forwarded before it. */
  bytes: number;
}

export interface Asked {
  message: string;
  conversationId: string;
  path: string;
  at: number;
  /** When the service's answer ended whole, if it did. */
  answered?: number;
  /** When the backend's side of the request went away (or was cut) before the answer's end, if it did. */
  left?: number;
  /** How and when the proxy broke the answer (cut it, or began to hold it back), if it did. */
  broken?: { mode: BreakMode; at: number };
}

/** The paths of the service's continue operations, both forms, every delivery. */
const continuePath = /\/conversations\/([^/]+)\/(chat|chat-sse|chat-http2|continue|continue-sse|continue-stream)$/;

export async function startFaultProxy(options: { serviceUrl: string; stallMs: number; upstream: 'finish' | 'abort' }) {
  const { serviceUrl, stallMs, upstream: upstreamPolicy } = options;
  const asked: Asked[] = [];
  const planned = new Map<string, Break>();
  /** The breaks made, by message, with when. */
  const applied = new Map<string, Break & { at: number }>();
  let open = 0;
  let idle: (() => void) | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const payload = await readBody(req);
    const match = continuePath.exec(new URL(req.url ?? '/', 'http://x').pathname);
    let fault: Break | undefined;
    let message: string | undefined;
    let record: Asked | undefined;
    if (match) {
      try {
        message = String((JSON.parse(payload.toString()) as { message: unknown }).message);
      } catch {
        message = payload.toString();
      }
      record = { message, conversationId: match[1]!, path: match[2]!, at: Date.now() };
      asked.push(record);
      fault = planned.get(message);
      planned.delete(message);
    }
    open++;
    const upstream = httpRequest(`${serviceUrl}${req.url}`, {
      method: req.method,
      headers: endToEnd(req.headers, { 'content-length': payload.length }),
      agent: false,
    });
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      if (--open === 0) idle?.();
    };
    const downstreamGone = () => res.destroyed || res.writableEnded;
    res.on('close', () => {
      if (record && !record.left && !res.writableFinished) record.left = Date.now();
      if (!res.writableFinished && upstreamPolicy === 'abort') upstream.destroy();
    });
    upstream.on('error', () => {
      end();
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    upstream.on('response', answer => {
      answer.on('close', end);
      answer.on('end', () => record && (record.answered = Date.now()));
      answer.on('error', () => res.destroy());
      res.writeHead(answer.statusCode!, endToEnd(answer.headers));
      const streamed = /event-stream|ndjson|json-seq/.test(String(answer.headers['content-type']));
      if (!fault || !streamed) {
        answer.on('data', (chunk: Buffer) => downstreamGone() || res.write(chunk));
        answer.on('end', () => downstreamGone() || res.end());
        answer.on('close', () => answer.complete || res.destroy());
        return;
      }
      const boundary = String(answer.headers['content-type']).includes('event-stream') ? '\n\n' : '\n';
      const { mode, frames, bytes } = fault;
      let frameCount = 0;
      let sinceFrame = 0;
      let broken = false;
      let stalled: Buffer[] | undefined;
      const breakNow = (head: Buffer, rest: Buffer) => {
        broken = true;
        const at = Date.now();
        if (record) record.broken = { mode, at };
        if (record && mode !== 'stall') record.left = at;
        applied.set(message!, { ...fault!, at });
        if (mode !== 'stall' && upstreamPolicy === 'abort') upstream.destroy();
        if (mode === 'cut-clean') res.end(head);
        else if (mode === 'cut-reset') res.write(head, () => res.socket?.destroy());
        else {
          res.write(head);
          stalled = [rest];
          setTimeout(() => {
            // The backend gave up long since; if it did not, it gets the rest.
            const held = Buffer.concat(stalled!);
            stalled = undefined;
            if (downstreamGone()) return;
            res.write(held);
            if (answer.complete) res.end();
          }, stallMs);
        }
      };
      answer.on('data', (chunk: Buffer) => {
        if (stalled) return void stalled.push(chunk);
        if (broken) return void (downstreamGone() || res.write(chunk));
        // Where in this chunk the break falls, if it does.
        let at = -1;
        const text = chunk.toString('latin1');
        let from = 0;
        while (at < 0) {
          if (frameCount >= frames) {
            const need = bytes - sinceFrame;
            const next = text.indexOf(boundary, from);
            const left = (next < 0 ? text.length : next + boundary.length) - from;
            if (need < left) at = from + need;
            else if (next < 0) {
              sinceFrame += left;
              break;
            } else {
              // The frame was shorter than `bytes`: the break falls after it.
              at = next + boundary.length;
            }
          } else {
            const next = text.indexOf(boundary, from);
            if (next < 0) {
              sinceFrame += text.length - from;
              break;
            }
            frameCount++;
            sinceFrame = 0;
            from = next + boundary.length;
          }
        }
        if (at < 0) return void (downstreamGone() || res.write(chunk));
        breakNow(chunk.subarray(0, at), chunk.subarray(at));
      });
      answer.on('end', () => {
        if ((!broken || (mode === 'stall' && !stalled)) && !downstreamGone()) res.end();
      });
      // The service going away mid-stream breaks the backend's connection too, unless the break came first.
      answer.on('close', () => answer.complete || broken || res.destroy());
    });
    upstream.end(payload);
  };

  const server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.listen(0, '127.0.0.1');
  await new Promise(resolve => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    asked,
    applied,
    /** Breaks the reply to the next request that asks `message` (once). */
    plan(message: string, fault: Break) {
      planned.set(message, fault);
    },
    /** Resolves once no request to the service is open, or after `timeoutMs`. */
    quiet(timeoutMs: number) {
      if (!open) return Promise.resolve(true);
      return new Promise<boolean>(resolve => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        idle = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    },
  };
}
