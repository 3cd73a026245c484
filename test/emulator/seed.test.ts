import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEmulator } from '../../src/emulator/node.js';
import type { RunningEmulator } from '../../src/emulator/node.js';
import { defaultPersonas } from '../../src/emulator/personas.js';
import { prng, seedConversations } from '../../src/emulator/seed.js';
import { ServiceClient } from '../../src/service/client.js';
import type { Conversation } from '../../src/service/types.js';
import { apiKey } from '../support/service.js';

const end = '2026-03-01';
const month = () => seedConversations(defaultPersonas, { conversations: 300, end });

describe('seedConversations', () => {
  it('gives the same conversations for the same options, and others for another seed', () => {
    assert.deepEqual(month(), month());
    assert.notDeepEqual(seedConversations(defaultPersonas, { conversations: 300, end, seed: 2 }), month());
    const random = prng(7);
    const draws = Array.from({ length: 1000 }, random);
    assert.ok(draws.every(x => x >= 0 && x < 1));
    assert.deepEqual(draws.slice(0, 3), Array.from({ length: 3 }, prng(7)));
  });

  it('spreads them over the days before the end, oldest first, with every persona and many visitors', () => {
    const conversations = month();
    assert.equal(conversations.length, 300);
    const times = conversations.flatMap(c => c.chatMessages!.map(m => Date.parse(m.timestamp!)));
    assert.ok(Math.min(...times) >= Date.parse('2026-01-30T00:00:00Z'));
    assert.ok(Math.max(...times) < Date.parse(`${end}T00:00:00Z`) + 86_400_000, 'a late turn may pass midnight');
    const firsts = conversations.map(c => c.chatMessages![0]?.timestamp).filter(Boolean) as string[];
    assert.deepEqual(firsts, firsts.toSorted());
    assert.deepEqual(new Set(conversations.map(c => c.personaId)), new Set(defaultPersonas.map(p => p.personaId)));
    assert.ok(new Set(conversations.map(c => c.externalUserId)).size > 50);
  });

  it('writes what the service and the backend would have kept', () => {
    const conversations = month();
    const kept = (c: Conversation) => (c.metadata?.personaChat ?? {}) as Record<string, Record<string, unknown>>;
    for (const c of conversations) {
      const messages = c.chatMessages!;
      assert.equal(c.chatMessagesCount, messages.length);
      const sum = (key: 'promptTokens' | 'completionTokens' | 'totalTokens') =>
        messages.reduce((n, m) => n + (m[key] ?? 0), 0);
      assert.deepEqual(
        [c.promptTokens, c.completionTokens, c.totalTokens],
        [sum('promptTokens'), sum('completionTokens'), sum('totalTokens')],
      );
      // Questions, each with its reply after it, but for a question the service kept before it failed.
      for (const [i, m] of messages.entries()) {
        if (m.role === 'assistant') assert.equal(messages[i - 1]?.role, 'user');
        else assert.equal(m.role, 'user');
      }
      const replies = new Set(messages.filter(m => m.role === 'assistant').map(m => m.messageId));
      for (const id of Object.keys(kept(c).feedback ?? {})) assert.ok(replies.has(id), 'feedback is on a reply');
      for (const id of Object.keys(kept(c).citations ?? {})) assert.ok(replies.has(id), 'citations are of a reply');
    }
    const all = (map: string) =>
      conversations.flatMap(c => Object.values(kept(c)[map] ?? {})) as Record<string, unknown>[];
    assert.ok(all('feedback').some(f => f.score === -1 && typeof f.comments === 'string'));
    assert.ok(all('feedback').some(f => f.score === 1));
    assert.ok(all('outcomes').some(o => o.status === 'stopped'));
    assert.ok(all('outcomes').some(o => o.status === 'failed'));
    assert.ok(conversations.some(c => c.conversationStatus === 'deleted'));
    assert.ok(conversations.some(c => (c.metadata?.client as { page?: string } | undefined)?.page));
    assert.ok(conversations.some(c => !c.metadata?.client));
    const messages = conversations.flatMap(c => c.chatMessages!.map((m, i, all) => ({ m, next: all[i + 1] })));
    assert.ok(
      messages.some(({ m, next }) => m.role === 'user' && next?.role !== 'assistant'),
      'a question unanswered',
    );
    assert.ok(
      messages.some(({ m }) => m.role === 'assistant' && m.feedbacks?.some(f => f.score === -1)),
      "a thumb down in the service's own feedbacks",
    );
  });

  it('refuses options it cannot follow', () => {
    assert.throws(() => seedConversations(defaultPersonas, { conversations: -1 }), /conversations/);
    assert.throws(() => seedConversations(defaultPersonas, { days: 0 }), /days/);
    assert.throws(() => seedConversations(defaultPersonas, { end: 'soon' }), /end/);
  });
});

describe('the seeded emulator over real sockets', () => {
  let running: RunningEmulator;
  let client: ServiceClient;

  before(async () => {
    running = await startEmulator({ apiKey, seed: { conversations: 45, end } });
    client = new ServiceClient({ baseUrl: running.url, apiKey });
  });
  after(async () => {
    client.close();
    await running.close();
  });

  it('lists the seeded conversations page by page, and seeds more on request', async () => {
    const listed = [];
    for await (const c of client.allConversations()) listed.push(c);
    const visible = [...running.emulator.store.values()].filter(c => !c.isDeleted);
    assert.equal(listed.length, visible.length);
    const response = await fetch(`${running.url}/__emulator/seed`, {
      method: 'POST',
      body: JSON.stringify({ conversations: 5, end, seed: 9 }),
    });
    assert.deepEqual(await response.json(), { seeded: 5, conversations: 50 });
    const refused = await fetch(`${running.url}/__emulator/seed`, { method: 'POST', body: '{"conversations":"many"}' });
    assert.equal(refused.status, 400);
  });
});
