import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
