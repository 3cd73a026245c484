// Replies no model should write, through the whole stack (/hostile-chat in web-test-runner.config.mjs): each renders,
// as text where it must, the next message can be sent, and a reload shows the conversation.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import type { PersonaChat } from '../../src/element/persona-chat.js';
import { Harness, resetAll } from './harness.js';

const open = async () =>
  new Harness(
    await fixture<PersonaChat>(
      html`<persona-chat endpoint="/hostile-chat" mode="inline" storage="session"></persona-chat>`,
    ),
  );

/** How deep the elements under `root` nest. */
function depth(root: Element): number {
  let deepest = 0;
  for (const child of root.children) deepest = Math.max(deepest, depth(child));
  return deepest + 1;
}

const cases: [question: string, shows: string][] = [
  ['tent returns as a nested list', 'x'],
  ['tent returns as a deep quote', 'deep'],
  ['tent returns with stars', 'x'],
  ['tent returns with underscores', '_a_a'],
  ['tent returns indented', 'item'],
  ['tent returns in fences', ''],
];

describe('<persona-chat> with hostile replies', function () {
  // Each case streams a long reply, sends again and reloads: on a loaded machine that takes more than the default.
  this.timeout(40_000);
  beforeEach(resetAll);

  for (const [question, shows] of cases) {
    it(`renders a reply asked "${question}", sends the next message, and shows both after a reload`, async () => {
      const h = await open();
      const reply = await h.el.send(question);
      await h.status('done');
      await h.el.updateComplete;
      const markdown = h.lastReply()!.querySelector('.markdown')!;
      expect(markdown, 'the reply is drawn').to.not.equal(null);
      expect(markdown.textContent).to.contain(shows);
      expect(depth(markdown)).to.be.below(80, 'nesting is bounded');
      expect(reply.content.length).to.be.greaterThan(1000);
      await h.el.send('Do you rent tents?');
      await h.status('done');
      expect(h.userMessages()).to.deep.equal([question, 'Do you rent tents?']);
      h.el.remove();
      const again = await open();
      await waitUntil(() => again.userMessages().length === 2, 'the conversation is restored', { timeout: 8000 });
      await again.el.updateComplete;
      expect(again.replies().length).to.equal(2);
      expect(again.root.querySelector('[role="alert"]')).to.equal(null);
    });
  }

  it('shows a reply whose citations came malformed, with its sources, and keeps working', async () => {
    const h = await open();
    const reply = await h.el.send('tent returns with bad citations');
    await h.status('done');
    await h.el.updateComplete;
    expect(reply.citations).to.deep.equal([{}, {}, {}, {}]);
    const sources = [...h.lastReply()!.querySelectorAll('[part="citations"] li .source-name')].map(s =>
      s.textContent!.trim(),
    );
    expect(sources).to.deep.equal(['Source 1', 'Source 2', 'Source 3', 'Source 4']);
    h.lastReply()!.querySelector<HTMLAnchorElement>('sup.cite a')?.click();
    await h.el.send('Do you rent tents?');
    await h.status('done');
    h.el.remove();
    const again = await open();
    await waitUntil(() => again.userMessages().length === 2, 'the conversation is restored', { timeout: 8000 });
  });
});
