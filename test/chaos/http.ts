/** What the suite's two proxies share. */
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';

/** Headers that concern one connection only, which a proxy does not pass on (RFC 9110, 7.6.1). */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** `headers` without the hop-by-hop ones, and with `extra`. */
export function endToEnd(headers: IncomingHttpHeaders, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders {
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (!hopByHop.has(name) && value !== undefined) kept[name] = value;
  return { ...kept, ...extra };
}

/** A request's whole body (the bodies here are small JSON). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
