import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { citationsOf } from '../../src/server/annotations.js';
import { ConversationUpdates, nameFrom } from '../../src/server/updates.js';

describe('nameFrom', () => {
  it('trims and collapses whitespace', () => {
    assert.equal(nameFrom('  Do you\n\n rent\ttents?  '), 'Do you rent tents?');
  });

  it('cuts a long message on a word boundary, with an ellipsis', () => {
    const message = 'Which of your tents would keep two people dry through a week of rain in the mountains?';
    assert.equal(nameFrom(message), 'Which of your tents would keep two people dry through a week…');
    assert.ok(nameFrom(message).length <= 61, 'at most 60 characters and the ellipsis');
  });

  it('keeps exactly 60 characters whole, and cuts a word longer than half the length where it must', () => {
    const sixty = 'a'.repeat(29) + ' ' + 'b'.repeat(30);
    assert.equal(nameFrom(sixty), sixty);
    assert.equal(nameFrom(`${sixty} c`), `${sixty}…`, 'the space after the 60th character is a boundary');
    assert.equal(nameFrom('x '.concat('y'.repeat(100))), `x ${'y'.repeat(58)}…`);
  });

  it('never splits a character made of two UTF-16 units', () => {
    const name = nameFrom('🏕'.repeat(70));
    assert.equal(name, `${'🏕'.repeat(60)}…`);
  });
});

/** A service whose writes are never reached in these tests. */
const writes = {
  setConversationName: async () => assert.fail('no name is written'),
  setMetadata: async () => assert.fail('no metadata is written'),
};

describe('ConversationUpdates', () => {
  it('runs the writes to one conversation one after another, even after one fails', async () => {
    const updates = new ConversationUpdates({
      service: { getConversation: async () => ({ conversationId: 'c' }), ...writes },
      onError: () => {},
    });
    const order: string[] = [];
    let release!: () => void;
    const first = updates.queue('c', async () => {
      await new Promise<void>(resolve => (release = resolve));
      order.push('first');
      throw new Error('first failed');
    });
    const second = updates.queue('c', async () => order.push('second'));
    const elsewhere = updates.queue('d', async () => order.push('elsewhere'));
    await elsewhere;
    assert.deepEqual(order, ['elsewhere'], 'another conversation does not wait');
    release();
    await assert.rejects(first, /first failed/);
    await second;
    assert.deepEqual(order, ['elsewhere', 'first', 'second']);
  });

  it('reports a background write that failed, and settles once it has', async () => {
    const reports: string[] = [];
    const updates = new ConversationUpdates({
      service: {
        getConversation: async () => {
          throw new Error('unreachable');
        },
        ...writes,
      },
      onError: (what, error) => reports.push(`${what}: ${(error as Error).message}`),
    });
    updates.nameFromFirstMessage('c', 'Hello');
    await updates.settled();
    assert.deepEqual(reports, ['naming a conversation failed: unreachable']);
  });

  it('has only so many background writes under way at once, and lets the others follow', async () => {
    const updates = new ConversationUpdates({
      service: { getConversation: async () => ({ conversationId: 'c' }), ...writes },
      onError: () => {},
      concurrentWrites: 2,
    });
    let running = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const done: string[] = [];
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      void updates.background(id, 'writing', async () => {
        most = Math.max(most, ++running);
        await new Promise<void>(resolve => releases.push(resolve));
        running--;
        done.push(id);
      });
    }
    for (let i = 0; i < 20; i++) await Promise.resolve();
    assert.equal(releases.length, 2, 'two started, three wait');
    for (let i = 0; i < 5; i++) {
      releases[i]!();
      for (let j = 0; j < 20 && releases.length < Math.min(5, i + 3); j++) await Promise.resolve();
    }
    await updates.settled();
    assert.equal(most, 2, 'never more than two at once');
    assert.deepEqual(done, ['a', 'b', 'c', 'd', 'e'], 'all of them, first come first');
  });

  it('keeps the citations of a conversation’s replies that end close together in one read and one write', async () => {
    const reads: string[] = [];
    const written = new Map<string, Record<string, unknown>>();
    const updates = new ConversationUpdates({
      service: {
        getConversation: async id => {
          reads.push(id);
          return { conversationId: id, metadata: { client: { page: '/' } } };
        },
        setConversationName: writes.setConversationName,
        setMetadata: async (id, metadata) => {
          written.set(id, metadata);
          return { conversationId: id, metadata };
        },
      },
      onError: error => assert.fail(String(error)),
      // Only settling writes them here.
      citationDelayMs: 60_000,
    });
    const cited = (name: string) => [{ documentId: name, sourceName: name }];
    const first = updates.keepCitations('c', 'm1', cited('returns'));
    const second = updates.keepCitations('c', 'm2', cited('shipping'));
    void updates.keepCitations('d', 'm3', cited('rentals'));
    assert.equal(first, second, 'one write for both replies of the conversation');
    for (let i = 0; i < 20; i++) await Promise.resolve();
    assert.deepEqual(reads, [], 'nothing written while they wait');
    await updates.settled();
    assert.deepEqual(reads.sort(), ['c', 'd'], 'one read per conversation');
    assert.deepEqual(Object.fromEntries(citationsOf(written.get('c'))), {
      m1: cited('returns'),
      m2: cited('shipping'),
    });
    assert.deepEqual([...citationsOf(written.get('d'))], [['m3', cited('rentals')]]);
    assert.deepEqual(written.get('c')!.client, { page: '/' }, 'the other keys stay');
    void updates.keepCitations('c', 'm4', cited('membership'));
    await updates.settled();
    assert.deepEqual(reads.sort(), ['c', 'c', 'd'], 'a reply that ends later is written afresh');
    assert.equal(citationsOf(written.get('c')).size, 1, 'onto the metadata as read');
  });

  it('writes waiting citations by itself once their delay is over', async () => {
    let metadata: Record<string, unknown> | undefined;
    const updates = new ConversationUpdates({
      service: {
        getConversation: async id => ({ conversationId: id }),
        setConversationName: writes.setConversationName,
        setMetadata: async (id, value) => ((metadata = value), { conversationId: id }),
      },
      onError: error => assert.fail(String(error)),
      citationDelayMs: 1,
    });
    await updates.keepCitations('c', 'm1', [{ documentId: 'returns' }]);
    assert.deepEqual([...citationsOf(metadata).keys()], ['m1']);
  });
});
