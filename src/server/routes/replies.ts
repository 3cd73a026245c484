/**
 * @module
 * Replies, as runs: `POST /conversations/:id/messages` starts the run of a message (or attaches to it, replays
 * it, or retries it: the Idempotency-Key names the run), `GET …/runs/:key/events` follows a run after the
 * `Last-Event-ID` it was left at, and `POST …/runs/:key/stop` stops it wherever it is produced.
 */
import { Hono } from 'hono';
import * as z from 'zod/mini';
import { readJsonBody } from '../../json-body.js';
import { resendHeader } from '../../protocol.js';
import type { MessageReply, StopResponse, StreamEvents } from '../../protocol.js';
import type { LogLine } from '../config.js';
import { keepAliveOf, requestSignal } from '../env.js';
import type { Ctx, Env } from '../env.js';
import type { Parts } from '../parts.js';
import { HttpError, runNotFound } from '../errors.js';
import { noteFailure } from '../middleware/error-handler.js';
import type { Following } from '../following.js';
import { terminalStatus, toldDone, toldEvents } from '../run-log.js';
import { eventFrames, frame, ping, sseHeaders } from '../sse.js';
import type { RunRecord } from '../store.js';
import { parseEventId } from '../store.js';
import { conversationId } from './conversations.js';

const keyPattern = /^[A-Za-z0-9_.:-]{8,128}$/;

const keyRule = '8 to 128 letters, digits, _ . : or -';

export function replyRoutes(parts: Parts) {
  const { settings, ownership, runs, updates, limiter, secrets } = parts;
  const app = new Hono<Env>();
  const messageSchema = z.strictObject({
    message: z.string({ error: 'message must be a string' }).check(
      z.refine(m => m.trim().length > 0, 'message must not be empty'),
      z.refine(
        m => m.length <= settings.limits.messageMaxLength,
        `message must be at most ${settings.limits.messageMaxLength} characters`,
      ),
    ),
  });

  app.post('/conversations/:id/messages', async c => {
    const { sub } = c.get('user');
    const id = conversationId(c);
    const key = c.req.header('idempotency-key');
    if (!key || !keyPattern.test(key)) {
      throw new HttpError(400, 'invalid_request', `An Idempotency-Key header of ${keyRule} is required.`, {
        retryable: false,
      });
    }
    const after = lastEventId(c);
    const resentAt = firstSent(c);
    const { message } = await readJsonBody(c, messageSchema);
    await ownership.check(sub, id, requestSignal(c));
    const admit = Object.assign(() => limiter.message(sub, c), { plan: () => limiter.messageAdmission(sub, c) });
    // Where the runtime ends work with the response (Workers), the reply goes on through waitUntil.
    const keepAlive = keepAliveOf(c);
    const ref = { owner: sub, conversationId: id, key };
    const { record, accepted } = await runs.send(ref, message, admit, keepAlive, resentAt);
    await accepted;
    const naming = updates.nameFromFirstMessage(id, message);
    if (naming) keepAlive(naming);
    if (wantsStream(c)) return stream(c, record, after);
    // The whole reply, for `Accept: application/json`: once the run ended.
    const { content, citations, done } = await runs.whole(record, c.req.raw.signal);
    const reply: MessageReply = { content, citations, ...toldDone(done, settings.exposeUsage) };
    return c.json(reply);
  });

  app.get('/conversations/:id/runs/:key/events', async c => {
    const record = await ownRun(c);
    const after = lastEventId(c);
    // A HEAD (answered by this route, without its body) asks whether the run is there to follow: its headers alone,
    // with nothing started to follow the run and ping into a body nobody reads.
    if (c.req.method === 'HEAD') return c.body(null, 200, sseHeaders);
    return stream(c, record, after);
  });

  app.post('/conversations/:id/runs/:key/stop', async c => {
    const { sub } = c.get('user');
    const id = conversationId(c);
    const key = runKey(c);
    await ownership.check(sub, id, requestSignal(c));
    const result = await runs.stop({ owner: sub, conversationId: id, key });
    if (result === 'unknown') throw runNotFound();
    if (result === 'finished') {
      throw new HttpError(409, 'run_finished', 'This reply has already ended.', { retryable: false });
    }
    const body: StopResponse = { key, status: 'stopping' };
    return c.json(body, 202);
  });

  /** The run named by the route, if it is the visitor's; the same 404 otherwise. */
  async function ownRun(c: Ctx): Promise<RunRecord> {
    const { sub } = c.get('user');
    const id = conversationId(c);
    const key = runKey(c);
    await ownership.check(sub, id, requestSignal(c));
    return runs.find({ owner: sub, conversationId: id, key });
  }

  /**
   * The run's events as SSE: `meta` at once, then the log after `after`, then live events, pings between. The events
   * are pushed into the body as they come (following.ts); while the client does not keep up, they wait in the log.
   */
  function stream(c: Ctx, record: RunRecord, after: string | null) {
    let settle: (outcome: LogLine['outcome']) => void = () => {};
    c.set('outcome', new Promise(resolve => (settle = resolve)));
    let timer: ReturnType<typeof setInterval> | undefined;
    let following: Following | undefined;
    let open = true;
    const end = (outcome: LogLine['outcome']) => {
      open = false;
      clearInterval(timer);
      following?.close();
      settle(outcome);
    };
    const meta: StreamEvents['meta'] = {
      conversationId: record.conversationId,
      key: record.key,
      attempt: record.attempt,
      ping: settings.pingIntervalMs,
    };
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(frame('meta', meta));
        timer = setInterval(() => controller.enqueue(ping()), settings.pingIntervalMs);
        // Pings never hold a process open by themselves (runtimes without unref have no such concern).
        (timer as { unref?: () => void }).unref?.();
        following = runs.followRun(record, after, {
          // The events the store had are written together, in one piece of the response, as the browser is told
          // them: the log keeps the reply's token counts, which `done` carries only when the site turns them on.
          events: batch => controller.enqueue(eventFrames(toldEvents(batch, settings.exposeUsage))),
          ready: () => open && (controller.desiredSize ?? 1) > 0,
          ended: ended => {
            if (ended.how === 'error') {
              // The store failed while following: the browser sees the stream end and follows again.
              noteFailure(
                c,
                new HttpError(503, 'upstream_unavailable', 'The run could not be read.'),
                ended.error,
                secrets,
              );
            }
            // A new attempt began: the browser follows again from where it was.
            end(ended.how === 'terminal' ? outcomeOf(ended.last.event, ended.last.data) : ended.how);
            controller.close();
          },
        });
      },
      pull() {
        following?.resume();
      },
      cancel() {
        end('detached');
      },
    });
    return c.body(body, 200, sseHeaders);
  }

  return app;
}

function wantsStream(c: Ctx) {
  return (c.req.header('accept') ?? '').includes('text/event-stream');
}

function runKey(c: Ctx): string {
  const key = c.req.param('key') ?? '';
  if (!keyPattern.test(key)) {
    throw new HttpError(400, 'invalid_request', `The run key is malformed: it is ${keyRule}.`, { retryable: false });
  }
  return key;
}

/** The `Last-Event-ID` header, checked to be an event id; null when absent. */
function lastEventId(c: Ctx): string | null {
  const value = c.req.header('last-event-id');
  if (value === undefined || value === '') return null;
  if (!parseEventId(value)) {
    throw new HttpError(400, 'invalid_request', 'Last-Event-ID is not an id this stream gave.', {
      retryable: false,
    });
  }
  return value;
}

/** When a re-sent message was first sent (epoch ms), from the resend header's age; undefined for a first sending. */
function firstSent(c: Ctx): number | undefined {
  const value = c.req.header(resendHeader);
  if (value === undefined) return undefined;
  if (!/^\d{1,12}$/.test(value)) {
    throw new HttpError(400, 'invalid_request', `${resendHeader} must be a number of milliseconds.`, {
      retryable: false,
    });
  }
  return Date.now() - Number(value);
}

function outcomeOf(event: string, data: string): LogLine['outcome'] {
  const status = terminalStatus({ event, data });
  return status === 'stopped' || status === 'done' ? status : 'error';
}
