// The feedback controller on a host of its own. What keeps the votes is recorded here in place of the chat
// controller, so that each way a comment box can be left is seen apart; the element's suite (persona-chat) keeps
// votes at the real backend, and reads them back from the service.
import { expect, fixture, html, oneEvent, waitUntil } from '@open-wc/testing';
import { LitElement } from 'lit';
import { PersonaChatError } from '../../src/element/errors.js';
import type { PersonaChatFeedbackEvent } from '../../src/element/events.js';
import { FeedbackController } from '../../src/element/feedback-controller.js';
import type { Votes } from '../../src/element/feedback-controller.js';
import type { Feedback } from '../../src/element/state.js';

interface Vote {
  id: string;
  messageId: string | null;
  value: Feedback;
  comment: string | undefined;
  keep: boolean;
  conversationId: string | null;
}

class VotingHost extends LitElement {
  votes: Vote[] = [];
  shown: [string | null, string | null | undefined][] = [];
  failures: PersonaChatError[] = [];
  refuse = false;
  readonly state = { conversationId: 'c1' as string | null };
  readonly #votes: Votes = {
    state: this.state,
    feedback: async (id, messageId, value, comment, keep, conversationId = this.state.conversationId) => {
      this.votes.push({ id, messageId, value, comment, keep, conversationId });
      if (this.refuse) throw new PersonaChatError('rate_limited', 'Slow down.', true, 429);
    },
  };
  readonly feedback = new FeedbackController(this, this.#votes, {
    show: (commenting, thanked) => void this.shown.push([commenting, thanked]),
    failed: error => void this.failures.push(error),
  });
}
customElements.define('voting-host', VotingHost);

/** The page's visibility becomes `state`, as the browser tells a page that is hidden or shown. */
function visibility(state: DocumentVisibilityState) {
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
  try {
    document.dispatchEvent(new Event('visibilitychange'));
  } finally {
    delete (document as { visibilityState?: string }).visibilityState;
  }
}

/** The votes kept at the backend. */
const kept = (host: VotingHost) => host.votes.filter(vote => vote.keep);

describe('FeedbackController', () => {
  it('keeps a thumb up at once, fires persona-chat-feedback, and opens no comment box', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    const fired = oneEvent(host, 'persona-chat-feedback');
    host.feedback.give('t1', 'm1', 'up');
    const event = (await fired) as PersonaChatFeedbackEvent;
    expect([event.messageId, event.value]).to.deep.equal(['m1', 'up']);
    expect(host.shown).to.deep.equal([[null, null]]);
    expect(kept(host)).to.deep.equal([
      { id: 't1', messageId: 'm1', value: 'up', comment: undefined, keep: true, conversationId: 'c1' },
    ]);
  });

  it('shows a thumbs-down at once, and keeps it once with the comment sent, thanking for it', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    host.feedback.give('t1', 'm1', 'down');
    expect(host.shown).to.deep.equal([['t1', null]], 'the comment box opens');
    expect(host.votes.map(vote => [vote.value, vote.keep])).to.deep.equal([['down', false]], 'shown, not kept yet');
    host.feedback.give('t1', 'm1', 'down', 'Too vague.');
    expect(host.shown.at(-1)).to.deep.equal([null, 't1'], 'the box closes, and the reply is thanked');
    expect(kept(host).map(vote => [vote.value, vote.comment])).to.deep.equal([['down', 'Too vague.']]);
    host.feedback.keep();
    expect(kept(host)).to.have.length(1, 'nothing is left to keep');
  });

  it('keeps a thumbs-down without a comment when the box is left: another thumb, or told to', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    host.feedback.give('t1', 'm1', 'down');
    host.feedback.give('t2', 'm2', 'up');
    expect(kept(host).map(vote => [vote.id, vote.value, vote.comment])).to.deep.equal([
      ['t1', 'down', undefined],
      ['t2', 'up', undefined],
    ]);

    host.feedback.give('t3', 'm3', 'down');
    host.state.conversationId = 'c2';
    host.feedback.keep();
    expect(kept(host).at(-1), 'kept in the conversation it was given in').to.deep.equal({
      id: 't3',
      messageId: 'm3',
      value: 'down',
      comment: undefined,
      keep: true,
      conversationId: 'c1',
    });
    expect(host.shown.at(-1)).to.deep.equal([null, undefined], 'the box closes; a thanked reply stays thanked');
  });

  it('keeps a waiting thumbs-down when the page is left or hidden, and when the host is removed', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    host.feedback.give('t1', 'm1', 'down');
    window.dispatchEvent(new PageTransitionEvent('pagehide'));
    expect(kept(host).map(vote => vote.id)).to.deep.equal(['t1'], 'the page left');

    host.feedback.give('t2', 'm2', 'down');
    visibility('hidden');
    expect(kept(host).map(vote => vote.id)).to.deep.equal(['t1', 't2'], 'the page hidden');

    host.feedback.give('t3', 'm3', 'down');
    visibility('visible');
    expect(kept(host).map(vote => vote.id)).to.deep.equal(['t1', 't2'], 'the page shown: the box stays open');
    host.remove();
    expect(kept(host).map(vote => vote.id)).to.deep.equal(['t1', 't2', 't3'], 'the host removed');
    window.dispatchEvent(new PageTransitionEvent('pagehide'));
    expect(kept(host)).to.have.length(3, 'a removed host listens no more');
  });

  it('says when the backend refused a vote', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    host.refuse = true;
    host.feedback.give('t1', 'm1', 'up');
    await waitUntil(() => host.failures.length, 'the refusal');
    expect(host.failures.map(error => error.code)).to.deep.equal(['rate_limited']);
  });
});
