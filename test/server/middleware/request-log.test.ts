import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import type { LogLine } from '../../../src/server/config.js';
import type { Env } from '../../../src/server/env.js';
import { HttpError } from '../../../src/server/errors.js';
import { errorHandlers } from '../../../src/server/middleware/error-handler.js';
import { requestLog } from '../../../src/server/middleware/request-log.js';
import { afterNoKeyLeaks, events, setup } from '../../support/backend.js';
import { apiKey } from '../../support/service.js';
import { until } from '../../support/until.js';

const question = 'How long does shipping take?';

describe('the request log', () => {
  afterNoKeyLeaks();

  it('writes one structured log line per request, without tokens, cookies or the key', async () => {
    const { session, conversation, send, logs } = setup();
    const s = await session();
    const id = await conversation(s.token);
    await events(await send(s.token, id, question));
    // The stream's line is written when its outcome settles, just after its last frame.
    await until(() => logs.some(l => l.outcome !== undefined), 'the stream’s log line');
    assert.deepEqual(
      logs.map(l => `${l.method} ${l.path.replace(id, ':id')} ${l.status}${l.outcome ? ` ${l.outcome}` : ''}`),
      [
        'POST /persona-chat/session 200',
        'POST /persona-chat/conversations 201',
        'POST /persona-chat/conversations/:id/messages 200 done',
      ],
    );
    for (const line of logs) {
      assert.match(line.requestId, /^[0-9a-f-]{36}$/);
      const text = JSON.stringify(line);
      assert.ok(!text.includes(s.token) && !text.includes(s.cookie!.split('=')[1]!) && !text.includes(apiKey));
    }
  });

  describe('on its own', () => {
    /** The middleware before a few routes, errors rendered as the backend's; the lines it writes. */
    function app() {
      const lines: LogLine[] = [];
      let settle: (outcome: LogLine['outcome']) => void = () => {};
      const handlers = errorHandlers([]);
      const routes = new Hono<Env>()
        .use(requestId(), requestLog({ log: line => lines.push(line) }))
        .get('/ok', c => c.text('ok'))
        .get('/refused', () => {
          throw new HttpError(404, 'conversation_not_found', 'No such conversation.');
        })
        .get('/broken', () => {
          throw new Error('a bug');
        })
        .get('/stream', c => {
          c.set('outcome', new Promise(resolve => (settle = resolve)));
          return c.text('data: …');
        });
      routes.onError(handlers.onError);
      const fetch = (path: string) => routes.fetch(new Request(`http://backend.test${path}`));
      return { fetch, lines, settle: (outcome: LogLine['outcome']) => settle(outcome) };
    }

    it('writes what was asked and answered, at info, and leaves the query string out', async () => {
      const { fetch, lines } = app();
      const res = await fetch('/ok?token=abc');
      const [line] = lines;
      assert.deepEqual(
        { ...line, time: typeof line!.time, durationMs: typeof line!.durationMs },
        {
          time: 'string',
          level: 'info',
          requestId: res.headers.get('x-request-id'),
          method: 'GET',
          path: '/ok',
          status: 200,
          durationMs: 'number',
        },
      );
      assert.ok(!Number.isNaN(Date.parse(line!.time)));
      assert.ok(Number.isInteger(line!.durationMs) && line!.durationMs >= 0);
    });

    it('writes a refusal at warn and a failure at error, with the code and cause the error handler noted', async () => {
      const { fetch, lines } = app();
      await fetch('/refused');
      await fetch('/broken');
      assert.deepEqual(
        lines.map(({ level, status, code, detail }) => ({ level, status, code, detail })),
        [
          { level: 'warn', status: 404, code: 'conversation_not_found', detail: undefined },
          { level: 'error', status: 500, code: 'internal_error', detail: 'Error: a bug' },
        ],
      );
    });

    it('writes the line of a stream when its outcome settles, with that outcome', async () => {
      const { fetch, lines, settle } = app();
      const res = await fetch('/stream');
      assert.equal(await res.text(), 'data: …');
      assert.equal(lines.length, 0, 'nothing before its outcome settles');
      settle('error');
      await until(() => lines.length === 1, 'the stream’s line');
      assert.deepEqual(
        { level: lines[0]!.level, status: lines[0]!.status, outcome: lines[0]!.outcome },
        { level: 'error', status: 200, outcome: 'error' },
      );
    });
  });
});
