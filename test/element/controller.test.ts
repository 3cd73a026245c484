// The chat controller on a host of its own (no template, no element), against the real backend and emulator: the
// turn queue, what it tells its host through the callbacks it was made with, and what the service hears.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { LitElement } from 'lit';
import { ChatController } from '../../src/element/controller.js';
import type { ChatCallbacks } from '../../src/element/controller.js';
import type { PersonaChatError } from '../../src/element/errors.js';
import type { StorageKind } from '../../src/element/storage.js';
import { continues, faults, juniper, resetAll, upstreamEnded } from './harness.js';

/** What the controller told its host, in order. */
type Told = [string, ...unknown[]];

class ChatHostElement extends LitElement {
  endpoint = '/persona-chat';
  personaId = juniper;
  storage: StorageKind = 'session';
  metadata: Record<string, string> | undefined = { page: 'controller test' };
  fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);
  readonly told: Told[] = [];
  readonly callbacks: ChatCallbacks = {
    onReply: (result, id) => this.told.push(['reply', result.content.length > 0, result.finishReason, id]),
    onError: (error: PersonaChatError) => this.told.push(['error', error.code]),
    onConversation: (id, restored) => this.told.push(['conversation', restored]),
    onUnsent: texts => this.told.push(['unsent', ...texts]),
  };
  readonly chat = new ChatController(this, this.callbacks);
}
customElements.define('chat-host', ChatHostElement);

const host = () => fixture<ChatHostElement>(html`<chat-host></chat-host>`);
const statuses = (h: ChatHostElement) => h.chat.state.turns.map(turn => turn.status);
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: Error) => error.name,
  );

describe('ChatController', () => {
  beforeEach(resetAll);

  it('answers one message: a conversation, then the reply, told once each', async () => {
    const h = await host();
    const result = await h.chat.send('How do I return a tent?');
    expect(result.content).to.not.equal('');
    expect(result.finishReason).to.equal('stop');
    const [turn] = h.chat.state.turns;
    expect(h.told).to.deep.equal([
      ['conversation', false],
      ['reply', true, 'stop', turn!.id],
    ]);
    expect(turn!.reply).to.equal(result.content);
    expect(h.chat.state.conversationId).to.be.a('string');
    expect((await continues()).map(c => c.message)).to.deep.equal(['How do I return a tent?']);
  });

  it('sends queued messages one at a time, in order', async () => {
    await faults({ chunkDelayMs: 30 });
    const h = await host();
    const first = h.chat.send('How do I return a tent?');
    const second = h.chat.send('What does membership cost?');
    await waitUntil(() => statuses(h).join() === 'streaming,queued', 'the second waits for the first');
    await Promise.all([first, second]);
    expect(statuses(h)).to.deep.equal(['done', 'done']);
    expect((await continues()).map(c => c.message)).to.deep.equal([
      'How do I return a tent?',
      'What does membership cost?',
    ]);
  });

  it('stops the reply being written and gives the queued texts back, in order', async () => {
    await faults({ chunkDelayMs: 80 });
    const h = await host();
    const first = outcome(h.chat.send('How do I return a tent?'));
    await waitUntil(() => statuses(h)[0] === 'streaming', 'the reply is being written');
    const second = outcome(h.chat.send('What does membership cost?'));
    const third = outcome(h.chat.send('Do you rent tents?'));
    h.chat.stop();
    expect(await Promise.all([first, second, third])).to.deep.equal(['resolved', 'AbortError', 'AbortError']);
    expect(statuses(h)).to.deep.equal(['stopped']);
    expect(h.told.find(told => told[0] === 'unsent')).to.deep.equal([
      'unsent',
      'What does membership cost?',
      'Do you rent tents?',
    ]);
    await upstreamEnded('the backend stopped the reply at the service');
  });

  it('gives a message the backend refused for good back, and tells the error', async () => {
    const h = await host();
    const tooLong = 'x'.repeat(4001);
    const sent = outcome(h.chat.send(tooLong));
    expect(await sent).to.equal('PersonaChatError');
    expect(h.told.filter(told => told[0] !== 'conversation')).to.deep.equal([
      ['unsent', tooLong],
      ['error', 'invalid_request'],
    ]);
    expect(h.chat.state.turns, 'the refused turn is taken out').to.deep.equal([]);
    expect(await continues()).to.deep.equal([]);
  });

  it('restores the stored conversation with its messages, and starts afresh after newConversation()', async () => {
    const first = await host();
    await first.chat.send('How do I return a tent?');
    const id = first.chat.state.conversationId;
    first.remove();
    const second = await host();
    await second.chat.start();
    expect(second.chat.state.conversationId).to.equal(id);
    expect(second.told).to.deep.equal([['conversation', true]]);
    expect(second.chat.state.history.map(item => item.role)).to.deep.equal(['user', 'assistant']);
    second.chat.newConversation();
    expect(second.chat.state.conversationId).to.equal(null);
    expect(second.chat.state.history).to.deep.equal([]);
  });

  it('cancels what it started when its host leaves the page: the send rejects, and the service is not asked again', async () => {
    await faults({ chunkDelayMs: 80 });
    const h = await host();
    const sent = outcome(h.chat.send('How do I return a tent?'));
    await waitUntil(() => statuses(h)[0] === 'streaming', 'the reply is being written');
    h.remove();
    expect(await sent).to.equal('AbortError');
    expect(h.chat.state.turns).to.deep.equal([]);
    expect((await continues()).map(c => c.message)).to.deep.equal(['How do I return a tent?']);
  });
});
