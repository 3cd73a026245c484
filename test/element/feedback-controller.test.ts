// The feedback controller on a host of its own. What keeps the votes is recorded here in place of the chat
// controller, so that each way a comment box can be left is seen apart. Then in the element, against the real
// backend and the service: a vote changed and taken back, the comment shown back, and the comment box's own code.
import { expect, fixture, html, oneEvent } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { LitElement } from 'lit';
import { PersonaChatError } from '../../src/element/errors.js';
import type { PersonaChatFeedbackEvent } from '../../src/element/events.js';
import { FeedbackController } from '../../src/element/feedback-controller.js';
import type { Votes } from '../../src/element/feedback-controller.js';
import type { Feedback } from '../../src/element/state.js';
import { chat, oneEvent as elementEvent, resetAll, stored } from './harness.js';
import type { Harness } from './harness.js';
import { en } from '../../src/element/strings.js';

interface Vote {
  id: string;
  messageId: string | null;
  value: Feedback | undefined;
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
    expect(host.votes.map(vote => [vote.value, vote.keep])).to.deep.equal([['down', false]], 'shown, not kept yet');
    await waitUntil(() => host.shown.at(-1)?.[0] === 't1', 'the comment box opens once its code is loaded');
    expect(host.feedback.form(en), 'the box to draw').not.to.equal(undefined);
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

  it('takes a vote back at once, firing persona-chat-feedback with null, and drops a waiting thumbs-down', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    host.feedback.give('t1', 'm1', 'down');
    const fired = oneEvent(host, 'persona-chat-feedback');
    host.feedback.give('t1', 'm1', undefined);
    const event = (await fired) as PersonaChatFeedbackEvent;
    expect([event.messageId, event.value]).to.deep.equal(['m1', null]);
    expect(kept(host).map(vote => [vote.id, vote.value])).to.deep.equal([['t1', undefined]], 'only the withdrawal');
    expect(host.feedback.form(en), 'no comment box is left').to.equal(undefined);
    host.feedback.keep();
    expect(kept(host)).to.have.length(1, 'the thumbs-down is not kept after it');
  });

  it('says when the backend refused a vote', async () => {
    const host = await fixture<VotingHost>(html`<voting-host></voting-host>`);
    host.refuse = true;
    host.feedback.give('t1', 'm1', 'up');
    await waitUntil(() => host.failures.length, 'the refusal');
    expect(host.failures.map(error => error.code)).to.deep.equal(['rate_limited']);
  });

  describe('in the element', () => {
    beforeEach(resetAll);

    /** Sends a message and waits for its reply: the conversation and the reply's message id. */
    async function answered(h: Harness, text: string) {
      const started = elementEvent(h.el, 'persona-chat-conversation');
      const replied = elementEvent(h.el, 'persona-chat-message');
      void h.el.send(text).catch(() => {});
      const { conversationId } = await started;
      const { messageId } = await replied;
      await h.settled();
      return { conversationId, messageId: messageId! };
    }

    /** How long a wait on what the backend keeps may take: a round trip each try, on a busy machine. */
    const backendWait = { timeout: 5000 };

    /** The feedback the service keeps for a reply, in its conversation's metadata. */
    async function keptFeedback(conversationId: string, messageId: string) {
      const metadata = (await stored(conversationId)).metadata as
        { personaChat?: { feedback?: Record<string, { score: number; comments?: string }> } } | undefined;
      return metadata?.personaChat?.feedback?.[messageId];
    }

    /** The calls of the backend's onFeedback hook so far: the score each was told. */
    const hookScores = async () =>
      ((await (await fetch('/test-support/feedback-calls')).json()) as { feedback: { score: number } }[]).map(
        call => call.feedback.score,
      );

    const thumb = (h: Harness, label: 'Helpful' | 'Not helpful') =>
      h.lastReply()!.querySelector<HTMLButtonElement>(`[aria-label="${label}"]`)!;
    const pressed = (h: Harness) =>
      [...h.lastReply()!.querySelectorAll('[aria-pressed="true"]')].map(b => b.getAttribute('aria-label'));

    /** A new element on the same storage, as after a reload, once it shows the conversation's reply again. */
    async function reloaded(h: Harness) {
      h.el.remove();
      const again = await chat();
      await waitUntil(() => again.lastReply()?.querySelector('.reply-actions'), 'the reply restored with its thumbs');
      return again;
    }

    it('changes a vote both ways, and takes it back by pressing it again, at the backend too', async () => {
      const h = await chat();
      const { conversationId, messageId } = await answered(h, 'How long does shipping take?');
      const kept = () => keptFeedback(conversationId, messageId);

      thumb(h, 'Helpful').click();
      await waitUntil(async () => (await kept())?.score === 1, 'the thumb up is kept', backendWait);
      expect(pressed(h)).to.deep.equal(['Helpful']);

      thumb(h, 'Not helpful').click();
      await waitUntil(() => h.root.activeElement?.matches('.comment textarea'), 'the comment box takes the focus');
      expect(pressed(h), 'changed to down').to.deep.equal(['Not helpful']);
      thumb(h, 'Helpful').click();
      await waitUntil(() => !h.root.querySelector('.comment'), 'the box goes');
      expect(pressed(h), 'changed back to up').to.deep.equal(['Helpful']);
      await waitUntil(async () => (await hookScores()).length === 2, 'the second thumb up is kept', backendWait);
      expect(await hookScores(), 'the thumbs-down left for a thumb up was never kept').to.deep.equal([1, 1]);

      const taken = elementEvent(h.el, 'persona-chat-feedback');
      thumb(h, 'Helpful').click();
      expect((await taken).value).to.equal(null);
      await waitUntil(() => thumb(h, 'Helpful').getAttribute('aria-pressed') === 'false', 'no longer pressed');
      expect(pressed(h)).to.deep.equal([]);
      await waitUntil(async () => (await kept()) === undefined, 'the service keeps no vote', backendWait);
      expect(await hookScores(), 'the hook hears of the withdrawal').to.deep.equal([1, 1, 0]);

      const again = await reloaded(h);
      expect(pressed(again), 'a reload shows no vote').to.deep.equal([]);
      thumb(again, 'Helpful').click();
      await waitUntil(async () => (await kept())?.score === 1, 'a restored reply takes a vote', backendWait);
      // Pressed again once it shows pressed: a press on a thumb that does not show its vote yet gives the vote again.
      await waitUntil(() => thumb(again, 'Helpful').getAttribute('aria-pressed') === 'true', 'shown pressed');
      thumb(again, 'Helpful').click();
      await waitUntil(async () => (await kept()) === undefined, 'and takes it back', backendWait);
      expect(pressed(again)).to.deep.equal([]);
    });

    it('shows the comment sent back under its reply, after a reload too, until the vote is taken back', async () => {
      const h = await chat();
      const { conversationId, messageId } = await answered(h, 'Do you rent tents?');
      thumb(h, 'Not helpful').click();
      await waitUntil(() => h.root.activeElement?.matches('.comment textarea'), 'the comment box takes the focus');
      const box = h.root.activeElement as HTMLTextAreaElement;
      box.value = '  عن الخيام، من فضلك  ';
      h.root.querySelector<HTMLButtonElement>('.comment button[type="submit"]')!.click();
      await waitUntil(() => h.lastReply()!.querySelector('.given q'), 'the comment shown back');
      const shown = (reply: HTMLElement) => {
        const given = reply.querySelector('.given')!;
        const quote = given.querySelector('q')!;
        return [given.textContent!.replace(/\s+/g, ' ').trim(), quote.textContent, quote.getAttribute('dir')];
      };
      const comment = ['Your comment: عن الخيام، من فضلك', 'عن الخيام، من فضلك', 'auto'];
      expect(shown(h.lastReply()!)).to.deep.equal(comment);
      expect(h.root.querySelector('.comment'), 'the box is gone').to.equal(null);
      await waitUntil(async () => (await keptFeedback(conversationId, messageId))?.score === -1, 'kept', backendWait);

      const again = await reloaded(h);
      await waitUntil(() => again.lastReply()!.querySelector('.given q'), 'shown back after a reload');
      expect(shown(again.lastReply()!)).to.deep.equal(comment);
      expect(pressed(again)).to.deep.equal(['Not helpful']);

      thumb(again, 'Not helpful').click();
      await waitUntil(() => !again.lastReply()!.querySelector('.given'), 'the comment goes with the vote');
      expect(pressed(again)).to.deep.equal([]);
      expect(again.root.querySelector('.comment'), 'no box opens').to.equal(null);
      await waitUntil(
        async () => (await keptFeedback(conversationId, messageId)) === undefined,
        'nothing kept',
        backendWait,
      );
    });

    it('loads the comment box on a thumbs-down: the focus goes in, Escape leaves it and keeps the thumb', async () => {
      const h = await chat();
      const { conversationId, messageId } = await answered(h, 'Do you rent tents?');
      thumb(h, 'Not helpful').click();
      await waitUntil(() => h.root.activeElement?.matches('.comment textarea'), 'the comment box takes the focus');
      const box = h.root.querySelector('.comment')!;
      expect(getComputedStyle(box).display, 'its own styles came with it').to.equal('flex');
      h.root.activeElement!.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }),
      );
      await waitUntil(() => !h.root.querySelector('.comment'), 'the box closes');
      expect(h.root.activeElement, 'the focus is back on the thumb').to.equal(thumb(h, 'Not helpful'));
      await waitUntil(async () => (await keptFeedback(conversationId, messageId))?.score === -1, 'kept', backendWait);
      expect(h.lastReply()!.querySelector('.given'), 'no comment to show').to.equal(null);

      thumb(h, 'Helpful').click();
      await waitUntil(() => thumb(h, 'Helpful').getAttribute('aria-pressed') === 'true', 'changed to up');
      thumb(h, 'Not helpful').click();
      await waitUntil(() => h.root.activeElement?.matches('.comment textarea'), 'a second box, its code loaded');
      expect(pressed(h)).to.deep.equal(['Not helpful']);
    });
  });
});
