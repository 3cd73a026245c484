import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { executeServerCommand, sendKeys } from '@web/test-runner-commands';
import { PersonaChat } from '../../src/element/persona-chat.js';
import {
  Harness,
  ada,
  chat,
  continues,
  faults,
  juniper,
  oneEvent,
  resetAll,
  stored,
  upstreamEnded,
} from './harness.js';

/** Sends a message and waits for its reply: the conversation and the reply's message id. */
async function answered(h: Harness, text: string) {
  const started = oneEvent(h.el, 'persona-chat-conversation');
  const replied = oneEvent(h.el, 'persona-chat-message');
  void h.el.send(text).catch(() => {});
  const { conversationId } = await started;
  const { messageId } = await replied;
  await h.settled();
  return { conversationId, messageId: messageId! };
}

/** The calls of the backend's onFeedback hook so far. */
const feedbackCalls = async () =>
  (await (await fetch('/test-support/feedback-calls')).json()) as { messageId: string }[];

/** The feedback the service keeps for a reply, in its conversation's metadata. */
async function keptFeedback(conversationId: string, messageId: string) {
  const metadata = (await stored(conversationId)).metadata as
    { personaChat?: { feedback?: Record<string, { score: number; comments?: string }> } } | undefined;
  return metadata?.personaChat?.feedback?.[messageId];
}

describe('<persona-chat>', () => {
  beforeEach(resetAll);

  it('puts its headings under the level heading-level gives, and follows a change', async () => {
    const h = await chat(html`<persona-chat
      endpoint="/hostile-chat"
      mode="inline"
      storage="session"
      heading-level="4"
    ></persona-chat>`);
    await answered(h, 'How long does shipping take? Answer with a heading.');
    const levels = () =>
      [...h.root.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(el => `${el.tagName} ${el.textContent}`);
    expect(levels()).to.deep.equal(['H4 Chat', 'H5 Shipping', 'H5 Sources']);
    h.el.headingLevel = 1;
    await h.el.updateComplete;
    expect(levels(), 'a change redraws the replies').to.deep.equal(['H1 Chat', 'H2 Shipping', 'H2 Sources']);
    h.root.querySelector<HTMLButtonElement>('[part="history-button"]')!.click();
    await waitUntil(() => h.root.querySelector('#history-heading'), 'the history view');
    const title = h.root.querySelector('#history-heading')!;
    expect([title.getAttribute('role'), title.getAttribute('aria-level')]).to.deep.equal(['heading', '2']);
    h.el.setAttribute('heading-level', '9');
    await h.el.updateComplete;
    expect(h.root.querySelector('.header h2')?.textContent, 'not a level: 2').to.equal('Chat');
  });

  it('lets the page fill the message box and put the focus in it, and tells the page of the visitor’s changes', async () => {
    const launcher = html`<persona-chat endpoint="/persona-chat" storage="session" persona-id=${juniper}></persona-chat>`;
    const h = await chat(launcher);
    const told: string[] = [];
    h.el.addEventListener('persona-chat-draft', event => told.push(event.text));
    h.el.setDraft('Do you rent tents?');
    await h.el.updateComplete;
    expect(h.input.value).to.equal('Do you rent tents?');
    expect(h.sendButton.getAttribute('aria-disabled'), 'ready to send').to.equal('false');
    expect(told, 'the page is not told what it set').to.deep.equal([]);
    const reloaded = await chat(launcher);
    expect(reloaded.input.value, 'kept for a reload of the tab').to.equal('Do you rent tents?');
    reloaded.el.remove();

    expect(h.el.open).to.equal(false);
    await h.el.focusComposer();
    expect(h.el.open, 'the panel opened').to.equal(true);
    expect(h.root.activeElement).to.equal(h.input);
    await h.type('Do you rent tents in May?');
    await h.press('Enter');
    expect(told).to.deep.equal(['Do you rent tents in May?', ''], 'typed, then sent');
    await h.settled();
  });

  it('warns once of an attribute value it does not know, however often it is drawn, and uses the default', async () => {
    const said: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void said.push(args.map(String).join(' '));
    try {
      const el = await fixture<PersonaChat>(
        html`<persona-chat endpoint="/persona-chat" storage="none" mode="popup" theme="sepia"></persona-chat>`,
      );
      for (const draft of ['H', 'He', 'Hel']) {
        const input = el.shadowRoot!.querySelector('textarea')!;
        input.value = draft;
        input.dispatchEvent(new Event('input'));
        await el.updateComplete;
      }
      expect(el.shadowRoot!.querySelector('[part="launcher"]'), 'the launcher, as the default mode').not.to.equal(null);
      expect(said).to.deep.equal([
        '<persona-chat>: mode="popup" is not one of launcher, inline; using launcher.',
        '<persona-chat>: theme="sepia" is not one of auto, light, dark; using auto.',
      ]);
    } finally {
      console.warn = warn;
    }
  });

  it('sends the first message, creating a conversation, and streams a reply with footnotes and sources', async () => {
    const h = await chat();
    const conversation = oneEvent(h.el, 'persona-chat-conversation');
    await h.type('How long does shipping take?');
    await h.press('Enter');
    expect(h.userMessages()).to.deep.equal(['How long does shipping take?']);
    expect(h.input.value).to.equal('');
    const started = await conversation;
    expect(started.restored).to.equal(false);
    const message = await oneEvent(h.el, 'persona-chat-message');
    expect(message.content).to.match(/3 to 5 business days/);
    expect(message.citations[0]!.documentId).to.equal('shipping');
    await h.settled();
    const reply = h.lastReply()!;
    expect(reply.querySelector('strong')!.textContent).to.equal('Shipping:');
    const footnote = reply.querySelector<HTMLAnchorElement>('sup.cite a')!;
    expect(footnote.textContent).to.equal('1');
    // Headings go down one level at a time: the panel's title, then the Sources.
    const headings = [...h.root.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(el => Number(el.tagName[1]));
    expect(headings[0]).to.equal(2);
    headings.forEach((level, i) => expect(level, `heading ${i + 1}`).to.be.at.most((headings[i - 1] ?? 1) + 1));
    expect(reply.querySelector('[part="citations"] h3')!.textContent).to.equal('Sources');
    const source = reply.querySelector('[part="citations"] li')!;
    expect(source.textContent).to.contain('Shipping');
    expect(source.querySelector('a')!.getAttribute('href')).to.equal('https://shop.example.com/help/shipping');
    const opened = oneEvent(h.el, 'persona-chat-citation');
    footnote.click();
    expect((await opened).citation.documentId).to.equal('shipping');
    const toggle = source.querySelector('[aria-expanded]')!;
    expect(toggle.getAttribute('aria-expanded')).to.equal('true');
    expect(source.querySelector('.passages')!.checkVisibility()).to.equal(true);
    expect(h.root.activeElement, 'the focus goes to the source').to.equal(toggle);
    const feedback = oneEvent(h.el, 'persona-chat-feedback');
    reply.querySelector<HTMLButtonElement>('[aria-label="Helpful"]')!.click();
    const rated = await feedback;
    expect(rated.value).to.equal('up');
    expect(rated.messageId).to.equal(message.messageId);
    const helpful = reply.querySelector('[aria-label="Helpful"]')!;
    await waitUntil(() => helpful.getAttribute('aria-pressed') === 'true', 'the thumb is drawn pressed');
    const fill = (label: string) => getComputedStyle(reply.querySelector(`[aria-label="${label}"] svg`)!).fill;
    expect([fill('Helpful') === 'none', fill('Not helpful')], 'the vote given is filled').to.deep.equal([
      false,
      'none',
    ]);
    // The reply's text and sources are not drawn again for its thumbs: the source the visitor opened stays open.
    expect([source.isConnected, toggle.getAttribute('aria-expanded')]).to.deep.equal([true, 'true']);
    expect((await continues()).length).to.equal(1);
  });

  it('copies the code of a reply, and says so on its button and to screen readers', async () => {
    // Reading the clipboard back needs a permission that the test runner can grant only in Chromium.
    const readable = await executeServerCommand('grant-clipboard');
    // The stand-in model of /hostile-chat writes what it is asked for (of a question its guides answer): code.
    const h = await chat(html`<persona-chat endpoint="/hostile-chat" mode="inline" storage="none"></persona-chat>`);
    await h.el.send('tent returns as code');
    await h.settled();
    // The highlighter's chunk, loaded by this first code, draws the reply again when it comes.
    await waitUntil(() => h.lastReply()!.querySelector('[part="code-block"] code span'), 'the code highlighted');
    const block = h.lastReply()!.querySelector('[part="code-block"]')!;
    const button = block.querySelector<HTMLButtonElement>('[part="copy-button"]')!;
    const status = block.querySelector('[role="status"]');
    expect(status, 'a status for screen readers').to.not.equal(null);
    // A key press, as a visitor's: the gesture that lets a page write to the clipboard.
    button.focus();
    await sendKeys({ press: 'Enter' });
    await waitUntil(() => status!.textContent === 'Copied', 'the status says Copied');
    expect(button.textContent).to.equal('Copied');
    if (readable) expect(await navigator.clipboard.readText()).to.equal('npm install persona-chat');
    await waitUntil(() => button.textContent === 'Copy', 'the button says Copy again', { timeout: 5000 });
    expect(status!.textContent).to.equal('');
  });

  it('copies a whole reply as markdown with its sources, and says so on its button and to screen readers', async () => {
    // Reading the clipboard back needs a permission that the test runner can grant only in Chromium.
    const readable = await executeServerCommand('grant-clipboard');
    const h = await chat();
    const { content, citations } = await h.el.send('Do you rent tents?');
    await h.settled();
    expect(citations.length, 'a reply with sources').to.be.greaterThan(0);
    const button = h.lastReply()!.querySelector<HTMLButtonElement>('[part="copy-reply-button"]')!;
    expect(button.getAttribute('aria-label')).to.equal('Copy reply');
    // A key press, as a visitor's: the gesture that lets a page write to the clipboard.
    button.focus();
    await sendKeys({ press: 'Enter' });
    await waitUntil(() => button.getAttribute('aria-label') === 'Copied', 'the button says Copied');
    expect(h.root.querySelector('[aria-live="polite"]')!.textContent!.trim()).to.equal('Copied');
    if (readable) {
      const copied = await navigator.clipboard.readText();
      expect(copied.startsWith(`${content}\n\nSources:\n\n1. `), 'the text, then its sources').to.equal(true);
      expect(copied.split('\n').filter(line => /^\d+\. /.test(line)).length).to.equal(citations.length);
    }
    await waitUntil(() => button.getAttribute('aria-label') === 'Copy reply', 'the label comes back', {
      timeout: 5000,
    });
  });

  it('exports the conversation as markdown, and its header button saves it as a file', async () => {
    const h = await chat(
      html`<persona-chat endpoint="/persona-chat" mode="inline" storage="none" heading="Juniper" persona-id=${juniper}
      ></persona-chat>`,
    );
    expect(h.root.querySelector('[part="download-button"]'), 'nothing to save yet').to.equal(null);
    const { content } = await h.el.send('Do you rent tents?');
    await h.settled();
    const text = await h.el.exportTranscript();
    const blocks = text.split('\n\n');
    expect(blocks[0]).to.equal('# Juniper');
    expect(blocks[1]).to.match(/^\*\*You\*\* \(.+\)$/, 'the visitor, and when');
    expect(blocks[2]).to.equal('Do you rent tents?');
    expect(blocks[3]).to.equal('**Juniper**');
    expect(text).to.contain(`${content}\n\nSources:\n\n1. `);
    // Where the file goes is the browser's: the link it is saved through is caught as it is followed, and read.
    const saved = new Promise<HTMLAnchorElement>(resolve => {
      const follow = HTMLAnchorElement.prototype.click;
      HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
        HTMLAnchorElement.prototype.click = follow;
        resolve(this);
      };
    });
    h.root.querySelector<HTMLButtonElement>('[part="download-button"]')!.click();
    const link = await saved;
    expect(link.download).to.match(/^conversation-\d{4}-\d{2}-\d{2}\.md$/);
    expect(await (await fetch(link.href)).text()).to.equal(text);
  });

  it('lays out only what is in view of a long conversation, and opens it at its end', async () => {
    // The stand-in model of /hostile-chat answers at once, so that 21 exchanges take a moment.
    const long = html`<persona-chat
      endpoint="/hostile-chat"
      mode="inline"
      storage="session"
      style="display: block; height: 400px"
    ></persona-chat>`;
    const first = await chat(long);
    for (let i = 1; i <= 21; i++) await first.el.send(`Question ${i}: do you rent tents?`);
    first.el.remove();
    const second = await chat(long);
    await waitUntil(() => second.replies().length === 21, 'restored', { timeout: 5000 });
    const list = second.root.querySelector<HTMLElement>('[part="messages"]')!;
    const messages = [...second.root.querySelectorAll<HTMLElement>('.message')];
    const laidOut = (message: HTMLElement) => message.checkVisibility({ contentVisibilityAuto: true });
    await waitUntil(
      () => laidOut(messages.at(-1)!) && list.scrollHeight - list.scrollTop - list.clientHeight < 2,
      'the newest message is laid out, at the end of the list',
    );
    // 42 messages: the 20 oldest are one chunk, skipped while out of view; the 22 newest are drawn as they are.
    expect(messages.map(laidOut).indexOf(true), 'the first message laid out').to.equal(20);
    messages[0]!.scrollIntoView();
    await waitUntil(() => laidOut(messages[0]!), 'the oldest message is laid out once in view');
  });

  it('draws a restored reply of 3,000 table rows a piece at a time, busy until every row is there', async () => {
    const long = html`<persona-chat
      endpoint="/hostile-chat"
      mode="inline"
      storage="session"
      style="display: block; height: 400px"
    ></persona-chat>`;
    const first = await chat(long);
    await answered(first, 'Do you rent tents? The whole catalogue, please.');
    first.el.remove();
    const second = await chat(long);
    await oneEvent(second.el, 'persona-chat-conversation');
    // The restored conversation is drawn in the next frame, as the element draws its messages; no piece after the
    // first can come before this frame's end.
    await new Promise(requestAnimationFrame);
    const reply = second.lastReply()!;
    const markdown = reply.querySelector('.markdown')!;
    const rows = () => [...markdown.querySelectorAll('tbody tr')];
    expect(reply.getAttribute('role')).to.equal('article');
    expect(markdown.getAttribute('aria-busy'), 'busy while pieces are to come').to.equal('true');
    expect(rows().length).to.be.greaterThan(0).and.lessThan(3000);
    await waitUntil(() => !markdown.hasAttribute('aria-busy'), 'every piece drawn', { timeout: 30_000 });
    expect(rows().map(row => [...row.children].map(cell => cell.textContent))).to.deep.equal(
      Array.from({ length: 3000 }, (_, i) => [
        `${i + 1}`,
        `Trail item #${i + 1}`,
        `$${((i + 1) * 37) % 500}.00`,
        `in stock, ships in ${(i + 1) % 9} days`,
      ]),
    );
    expect(reply.querySelector('[part="citations"]'), 'then its sources').to.not.equal(null);
    const list = second.root.querySelector<HTMLElement>('[part="messages"]')!;
    await waitUntil(
      () => list.scrollHeight - list.scrollTop - list.clientHeight < 2,
      'the list kept at its end as the pieces came',
    );
  }).timeout(40_000);

  it('restores the conversation, messages and citations, after a reload', async () => {
    const first = await chat();
    await first.el.send('Do you rent tents?');
    await first.settled();
    first.el.remove();
    const second = await chat();
    const restored = await oneEvent(second.el, 'persona-chat-conversation');
    expect(restored.restored).to.equal(true);
    await waitUntil(() => second.replies().length === 1, 'restored');
    expect(second.userMessages()).to.deep.equal(['Do you rent tents?']);
    expect(second.lastReply()!.textContent).to.contain('Gear rentals');
    expect(second.lastReply()!.querySelector('[part="citations"]')!.textContent).to.contain('Gear rentals');
    expect((await continues()).length).to.equal(1, 'restoring sends nothing');
  });

  it('shows every footnote with its source and passages on a device that kept nothing', async () => {
    const h = await chat();
    const started = oneEvent(h.el, 'persona-chat-conversation');
    const replied = oneEvent(h.el, 'persona-chat-message');
    void h.el.send('What is your return policy?').catch(() => {});
    const { conversationId } = await started;
    const { citations } = await replied;
    expect(citations.length).to.be.greaterThan(0);
    await h.settled();
    // Another device, and a backend restarted without its store: the sources come from the service alone.
    await fetch('/test-support/restart-backend?fresh=1');
    sessionStorage.clear();
    localStorage.clear();
    const other = await chat();
    await other.el.openConversation(conversationId);
    await waitUntil(() => other.lastReply()?.querySelector('a[data-cite]'), 'the footnotes');
    const reply = other.lastReply()!;
    const footnotes = [...reply.querySelectorAll<HTMLAnchorElement>('a[data-cite]')];
    for (const footnote of footnotes) {
      const source = reply.querySelector(`[data-source="${footnote.dataset.cite}"]`);
      expect(source, `footnote ${footnote.textContent} has its source`).to.not.equal(null);
      expect(source!.querySelector('.passages')!.textContent!.trim()).to.not.equal('', 'with its passages');
    }
  });

  it('starts fresh when the stored conversation id is stale', async () => {
    const h = await chat();
    await h.el.send('Hello');
    await h.settled();
    const key = Object.keys(sessionStorage).find(k => k.endsWith(':conversation'))!;
    h.el.remove();
    sessionStorage.setItem(key, crypto.randomUUID());
    const fresh = await chat();
    await waitUntil(() => sessionStorage.getItem(key) === null, 'the stale id is forgotten', { timeout: 5000 });
    await fresh.el.updateComplete;
    expect(fresh.replies().length).to.equal(0);
    expect(fresh.root.querySelector('[role="alert"]')).to.equal(null, 'no error shown');
    await fresh.el.send('Hello again');
    await fresh.settled();
    expect(fresh.userMessages()).to.deep.equal(['Hello again']);
  });

  it('starts a new conversation for a message when the service lost the stored one', async () => {
    const h = await chat();
    const first = oneEvent(h.el, 'persona-chat-conversation');
    await h.el.send('Hello');
    const { conversationId: lost } = await first;
    await fetch('/emulator/__emulator/reset', { method: 'POST' });
    const second = oneEvent(h.el, 'persona-chat-conversation');
    const reply = await h.el.send('Do you rent tents?');
    const { conversationId, restored } = await second;
    expect(restored).to.equal(false);
    expect(conversationId).to.not.equal(lost);
    expect(reply.content).to.contain('Gear rentals');
    expect((await stored(conversationId)).chatMessages.map(m => m.content)[0]).to.equal('Do you rent tents?');
  });

  it('stops a reply: the emulator sees the request end, and what arrived stays', async () => {
    await faults({ chunkDelayMs: 100 });
    const h = await chat();
    const reply = h.el.send('How do I return a tent?');
    await h.writing();
    expect(h.el.matches(':state(streaming)'), 'a custom state for host CSS').to.equal(true);
    expect(h.sendButton.textContent).to.equal('Stop');
    h.sendButton.click();
    await h.status('stopped');
    expect(h.el.matches(':state(stopped)') && !h.el.matches(':state(streaming)')).to.equal(true);
    expect((await reply).finishReason).to.equal('stopped');
    await upstreamEnded('the upstream request ended');
    expect(h.retryButton, 'Retry is offered').to.not.equal(null);
    expect(h.lastReply()!.querySelector('.markdown')!.textContent!.trim()).to.not.equal('');
    expect(h.sendButton.textContent).to.equal('Send');
  });

  it('recovers a reply the connection to the service cut on its own: reconnecting, not an error, asked once more', async () => {
    await faults({ chunkDelayMs: 20, cut: { afterChunks: 5, count: 1 } });
    const h = await chat();
    const errors: Event[] = [];
    h.el.addEventListener('persona-chat-error', event => errors.push(event));
    const reply = h.el.send('What does membership cost?');
    await h.reconnecting();
    expect(h.lastReply()!.querySelector('[role="status"]')!.textContent).to.equal('Reconnecting…');
    expect(h.root.querySelector('[part="error"]'), 'no error is shown').to.equal(null);
    expect((await reply).content).to.contain('Membership costs $30');
    await h.status('done');
    expect((await continues()).length).to.equal(2, 'one more upstream send, not two');
    expect(h.lastReply()!.textContent).to.contain('Membership costs $30');
    expect(h.lastReply()!.textContent).to.not.contain('Reconnecting');
    expect(h.replies().length).to.equal(1);
    expect(errors.length).to.equal(0);
    expect(h.retryButton).to.equal(null);
  });

  it('shows Retry after repeated failures of the way to a reply, having asked again a bounded number of times', async () => {
    await faults({ cut: { afterChunks: 3, count: null } });
    const h = await chat();
    const failed = oneEvent(h.el, 'persona-chat-error');
    void h.el.send('What does membership cost?').catch(() => {});
    const error = await failed;
    expect(error.retryable).to.equal(true);
    await h.status('interrupted');
    expect(h.lastReply()!.textContent).to.contain('This reply was interrupted.');
    expect(h.retryButton).to.not.equal(null);
    expect((await continues()).length).to.equal(6, 'sent once, then five times more on its own');
  }).timeout(40_000);

  it('keeps a message it could not send as a turn with Retry, and the message box usable', async () => {
    const h = await chat();
    const real = h.el.fetch;
    h.el.fetch = async () => {
      throw new TypeError('Failed to fetch');
    };
    await h.type('Is this kept?');
    await h.press('Enter');
    const error = await oneEvent(h.el, 'persona-chat-error');
    expect(error.code).to.equal('network_error');
    await h.status('failed');
    expect(h.userMessages()).to.deep.equal(['Is this kept?']);
    const notices = [...h.root.querySelectorAll('[part="error"]')].map(notice => notice.textContent!.trim());
    expect(notices, 'one notice, in the transcript, with the reason').to.have.length(1);
    expect(notices[0]).to.match(/^This message has not been answered\. The chat cannot be reached/);
    expect(h.root.querySelector('.live')!.textContent, 'said to a screen reader').to.contain('cannot be reached');
    expect(h.input.readOnly).to.equal(false);
    expect(h.input.getAttribute('aria-busy')).to.not.equal('true');
    h.el.fetch = real;
    const done = oneEvent(h.el, 'persona-chat-message');
    h.retryButton!.click();
    expect((await done).content).to.match(/rent/i);
    expect((await continues()).length).to.equal(1);
  });

  it('puts a message the backend refuses for good back in the message box', async () => {
    const h = await chat();
    await h.type('x'.repeat(4001));
    await h.press('Enter');
    const error = await oneEvent(h.el, 'persona-chat-error');
    expect(error.code).to.equal('invalid_request');
    await h.el.updateComplete;
    expect(h.input.value).to.equal('x'.repeat(4001));
    expect(h.userMessages()).to.deep.equal([]);
    expect(h.root.querySelector('[role="alert"]')!.textContent).to.contain('too long');
  });

  it('refreshes an expired token once and sends the message upstream once', async () => {
    const h = await chat();
    await h.el.send('Hello');
    await h.settled();
    // Stand-in for ten minutes passing: the next message goes out with an expired (validly signed) token.
    const real = h.el.fetch;
    let swapped = false;
    h.el.fetch = async (input, init) => {
      const url = String(input);
      if (!swapped && url.endsWith('/messages')) {
        swapped = true;
        const token = String(new Headers(init!.headers).get('authorization')).slice(7);
        const { token: expired } = await (
          await fetch(`/test-support/expire?token=${token}`, { method: 'POST' })
        ).json();
        init = {
          ...init,
          headers: { ...(init!.headers as Record<string, string>), authorization: `Bearer ${expired}` },
        };
      }
      return real(input, init);
    };
    await h.el.send('What are your store hours?');
    await h.settled();
    expect(swapped).to.equal(true);
    expect(h.lastReply()!.textContent).to.contain('9 a.m. to 8 p.m.');
    expect((await continues()).length).to.equal(2, 'one upstream send per message');
  });

  it('keeps streaming when the tab is hidden and shown, sending the message upstream once', async () => {
    await faults({ chunkDelayMs: 40 });
    const h = await chat();
    const reply = h.el.send('How do I return a tent?');
    await h.writing();
    const hidden = Object.getOwnPropertyDescriptor(Document.prototype, 'hidden')!;
    try {
      for (const value of [true, false, true, false]) {
        Object.defineProperty(document, 'hidden', { configurable: true, get: () => value });
        document.dispatchEvent(new Event('visibilitychange'));
        await new Promise(resolve => setTimeout(resolve, 50));
      }
    } finally {
      Object.defineProperty(document, 'hidden', hidden);
      delete (document as { hidden?: boolean }).hidden;
    }
    await reply;
    expect((await continues()).length).to.equal(1);
    expect((await continues())[0]!.aborted).to.equal(false);
  });

  it('works with the keyboard alone', async () => {
    const el = await fixture<PersonaChat>(
      html`<persona-chat endpoint="/persona-chat" storage="none" persona-id=${juniper}></persona-chat>`,
    );
    const launcher = el.shadowRoot!.querySelector<HTMLButtonElement>('[part="launcher"]')!;
    launcher.focus();
    const opened = oneEvent(el, 'persona-chat-open');
    await sendKeys({ press: 'Enter' });
    await opened;
    await el.updateComplete;
    expect(el.shadowRoot!.activeElement?.tagName).to.equal('TEXTAREA');
    await sendKeys({ type: 'Do you rent tents?' });
    await sendKeys({ down: 'Shift' });
    await sendKeys({ press: 'Enter' });
    await sendKeys({ up: 'Shift' });
    await sendKeys({ type: 'And bear canisters?' });
    const textarea = el.shadowRoot!.querySelector('textarea')!;
    expect(textarea.value).to.equal('Do you rent tents?\nAnd bear canisters?');
    await sendKeys({ press: 'Enter' });
    await waitUntil(() => el.shadowRoot!.querySelector('.message.user'), 'sent with Enter');
    expect(el.shadowRoot!.querySelector('.message.user')!.textContent).to.equal(
      'Do you rent tents?\nAnd bear canisters?',
    );
    expect(textarea.value).to.equal('');
    expect(el.shadowRoot!.activeElement, 'focus stays in the composer while sending').to.equal(textarea);
    const closed = oneEvent(el, 'persona-chat-close');
    await sendKeys({ press: 'Escape' });
    await closed;
    await el.updateComplete;
    expect(el.shadowRoot!.activeElement).to.equal(launcher);
  });

  it('renders a reply full of hostile markdown and HTML as text, and runs nothing', async () => {
    (window as { __xss?: number }).__xss = 0;
    const mallory = '0b9c7c0e-5f7a-4c55-8a0e-6d1f3b2a9c41';
    const h = await chat(
      html`<persona-chat endpoint="/persona-chat" mode="inline" storage="none" persona-id=${mallory}></persona-chat>`,
    );
    const reply = await h.el.send('hostile reply test');
    await h.settled();
    expect(reply.content).to.contain('<script>');
    const root = h.root;
    for (const el of root.querySelectorAll('*')) {
      el.dispatchEvent(new Event('mouseover'));
      el.dispatchEvent(new Event('toggle'));
    }
    await new Promise(resolve => setTimeout(resolve, 200));
    expect((window as { __xss?: number }).__xss).to.equal(0);
    expect(
      root.querySelectorAll('.markdown script, .markdown img, .markdown iframe, .markdown details, .markdown b').length,
    ).to.equal(0);
    for (const el of root.querySelectorAll('.message *')) {
      for (const attr of el.attributes) {
        expect(attr.name.startsWith('on'), `${el.tagName} ${attr.name}`).to.equal(false);
        expect(attr.value).not.to.match(/^\s*(javascript|vbscript|data):/i);
      }
    }
    expect(h.lastReply()!.querySelector('.markdown')!.textContent).to.contain('<script>window.__xss=1</script>');
    expect(root.querySelector('a.image')!.getAttribute('href')).to.equal('https://tracker.example/p.png?leak=secret');
    expect(h.lastReply()!.querySelector('[part="citations"] a'), 'a javascript: source URL is not a link').to.equal(
      null,
    );
  });

  it('stays pinned to the newest text, unless the reader scrolled up: then it offers the new messages', async () => {
    await faults({ chunkDelayMs: 30 });
    const box = await fixture<HTMLDivElement>(
      html`<div style="height: 360px"><persona-chat endpoint="/persona-chat" mode="inline" storage="none" persona-id=${juniper}></persona-chat></div>`,
    );
    const el = box.querySelector('persona-chat')!;
    const harness = new Harness(el);
    const list = () => harness.root.querySelector<HTMLElement>('[part="messages"]')!;
    await el.send('How do I return a tent?');
    const next = el.send('Which sleeping bag for winter?');
    await harness.writing();
    await waitUntil(() => list().scrollHeight > list().clientHeight + 100, 'the list overflows');
    await waitUntil(() => list().scrollHeight - list().scrollTop - list().clientHeight < 40, 'pinned to the bottom');
    list().scrollTop = 0;
    list().dispatchEvent(new Event('scroll'));
    await waitUntil(() => harness.root.querySelector('.jump'), 'New messages offered');
    expect(list().scrollTop).to.equal(0, 'the reader stays where they are');
    harness.root.querySelector<HTMLButtonElement>('.jump')!.click();
    await waitUntil(() => list().scrollHeight - list().scrollTop - list().clientHeight < 40, 'back at the newest text');
    await next;
  });

  it('keeps two instances independent', async () => {
    const [a, b] = await Promise.all([
      chat(
        html`<persona-chat
          endpoint="/persona-chat"
          mode="inline"
          storage="session"
          persona-id=${juniper}
        ></persona-chat>`,
      ),
      chat(
        html`<persona-chat endpoint="/persona-chat" mode="inline" storage="session" persona-id=${ada}></persona-chat>`,
      ),
    ]);
    await Promise.all([a.el.send('Do you rent tents?'), b.el.send('How do I theme the widget?')]);
    await a.settled();
    await b.settled();
    expect(a.lastReply()!.textContent).to.contain('Gear rentals');
    expect(b.lastReply()!.textContent).to.contain('Theming');
    expect(a.userMessages()).to.deep.equal(['Do you rent tents?']);
    expect(b.userMessages()).to.deep.equal(['How do I theme the widget?']);
  });

  it('lets the host veto or rewrite a message, and sends its metadata when the conversation starts', async () => {
    const h = await chat();
    h.el.metadata = { page: '/tents', campaign: 'autumn' };
    h.el.addEventListener('persona-chat-send', event => {
      if (event.detail.text.includes('secret')) event.preventDefault();
      else event.detail.text = event.detail.text.replace('tent', 'tent?');
    });
    let vetoed: unknown;
    await h.el.send('my secret').catch(error => (vetoed = error));
    expect((vetoed as Error).name).to.equal('AbortError');
    expect(h.userMessages()).to.deep.equal([]);
    const conversation = oneEvent(h.el, 'persona-chat-conversation');
    await h.el.send('Can I rent a tent');
    const started = await conversation;
    expect(started.detail, 'the data is in detail, as in every event').to.deep.equal({
      conversationId: started.conversationId,
      restored: false,
    });
    const { conversationId } = started.detail;
    expect(h.userMessages()).to.deep.equal(['Can I rent a tent?']);
    const kept = (await stored(conversationId)) as unknown as { metadata: { client: unknown } };
    // Beside it, the backend keeps the reply's citations under its own key.
    expect(kept.metadata.client).to.deep.equal({ page: '/tents', campaign: 'autumn' });
  });

  it('keeps the path of the page a conversation starts on, without its query or fragment, unless the host names one', async () => {
    history.replaceState(null, '', `${location.pathname}?visitor=ada@example.com#top`);
    try {
      const h = await chat();
      h.el.metadata = { campaign: 'autumn' };
      const conversation = oneEvent(h.el, 'persona-chat-conversation');
      await h.el.send('Can I rent a tent?');
      const { conversationId } = (await conversation).detail;
      const kept = (await stored(conversationId)) as unknown as { metadata: { client: unknown } };
      expect(kept.metadata.client).to.deep.equal({ page: location.pathname, campaign: 'autumn' });
    } finally {
      history.replaceState(null, '', location.pathname);
    }
  });

  it('queues a message sent while a reply streams, and sends it when the reply is done', async () => {
    await faults({ chunkDelayMs: 20 });
    const h = await chat();
    const first = h.el.send('How do I return a tent?');
    await h.writing();
    const second = h.el.send('What does membership cost?');
    await waitUntil(() => h.statuses().join() === 'streaming,queued', 'the second waits its turn');
    const [a, b] = await Promise.all([first, second]);
    expect(a.content).to.contain('Returns');
    expect(b.content).to.contain('Membership');
    expect(h.userMessages()).to.deep.equal(['How do I return a tent?', 'What does membership cost?']);
  });

  it('follows the conversation another tab switched to', async () => {
    const other = await chat();
    const { conversationId } = await new Promise<{ conversationId: string }>(resolve => {
      other.el.addEventListener('persona-chat-conversation', e => resolve(e), { once: true });
      void other.el.send('Do you rent tents?');
    });
    await other.settled();
    const h = await chat(
      html`<persona-chat endpoint="/persona-chat" mode="inline" persona-id=${juniper}></persona-chat>`,
    );
    await h.el.send('How long does shipping take?');
    await h.settled();
    const key = Object.keys(localStorage).find(k => k.endsWith(':conversation'))!;
    // What the browser does in this tab when another tab of the site writes the key.
    const restored = oneEvent(h.el, 'persona-chat-conversation');
    window.dispatchEvent(new StorageEvent('storage', { key, newValue: conversationId, storageArea: localStorage }));
    expect((await restored).conversationId).to.equal(conversationId);
    await waitUntil(() => h.userMessages()[0] === 'Do you rent tents?', 'switched');
  });

  it('keeps working in memory when storage throws', async () => {
    const descriptor = Object.getOwnPropertyDescriptor(window, 'localStorage')!;
    Object.defineProperty(window, 'localStorage', {
      configurable: true,
      get() {
        throw new DOMException('The operation is insecure.', 'SecurityError');
      },
    });
    try {
      const h = await chat(
        html`<persona-chat endpoint="/persona-chat" mode="inline" persona-id=${juniper}></persona-chat>`,
      );
      await h.el.send('Do you rent tents?');
      await h.settled();
      expect(h.lastReply()!.textContent).to.contain('Gear rentals');
    } finally {
      Object.defineProperty(window, 'localStorage', descriptor);
    }
  });

  it('keeps a thumbs-down and its comment: pressed again on another device of the same visitor', async () => {
    const h = await chat();
    const { conversationId, messageId } = await answered(h, 'How long does shipping take?');
    const rated = oneEvent(h.el, 'persona-chat-feedback');
    h.lastReply()!.querySelector<HTMLButtonElement>('[aria-label="Not helpful"]')!.click();
    expect((await rated).value).to.equal('down');
    await waitUntil(() => h.root.activeElement?.matches('.comment textarea'), 'the comment box takes the focus');
    const box = h.root.querySelector<HTMLTextAreaElement>('.comment textarea')!;
    box.value = 'Too vague about Canada.';
    h.root.querySelector<HTMLButtonElement>('.comment button[type="submit"]')!.click();
    await waitUntil(() => h.root.querySelector('.thanks'), 'thanked');
    const kept = () => keptFeedback(conversationId, messageId);
    await waitUntil(async () => (await kept())?.comments === 'Too vague about Canada.', 'the service keeps it');
    expect((await kept())!.score).to.equal(-1);
    const calls = await feedbackCalls();
    expect(calls.map(call => call.messageId)).to.deep.equal([messageId], 'the thumb and its comment, once');

    // Another device: nothing stored in the browser but the visitor's cookie.
    sessionStorage.clear();
    localStorage.clear();
    const other = await chat();
    await other.el.openConversation(conversationId);
    await waitUntil(() => other.lastReply()?.querySelector('[aria-pressed="true"]'), 'the pressed thumb');
    expect(other.lastReply()!.querySelector('[aria-pressed="true"]')!.getAttribute('aria-label')).to.equal(
      'Not helpful',
    );
  });

  it('keeps a thumbs-down without a comment when its box is left with Escape', async () => {
    const h = await chat();
    const { conversationId, messageId } = await answered(h, 'Do you rent tents?');
    h.lastReply()!.querySelector<HTMLButtonElement>('[aria-label="Not helpful"]')!.click();
    await waitUntil(() => h.root.activeElement?.matches('.comment textarea'), 'the comment box');
    expect((await feedbackCalls()).length).to.equal(0, 'not yet: a comment may come');
    h.root.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    await waitUntil(() => !h.root.querySelector('.comment'), 'the box closes');
    expect(h.el.open || h.el.mode === 'inline').to.equal(true, 'the panel stays');
    await waitUntil(async () => (await feedbackCalls()).length === 1, 'kept once');
    const kept = (await keptFeedback(conversationId, messageId))!;
    expect(kept.score).to.equal(-1);
    expect(kept.comments ?? '').to.equal('');
  });

  it('offers starter questions in an empty conversation, and sends the one clicked', async () => {
    const h = await chat(
      html`<persona-chat
        endpoint="/persona-chat"
        mode="inline"
        storage="none"
        persona-id=${juniper}
        starters="How long does shipping take?|Do you rent tents?"
      ></persona-chat>`,
    );
    const group = h.root.querySelector('[role="group"][aria-label="Suggested questions"]')!;
    const starters = [...group.querySelectorAll<HTMLButtonElement>('[part="starter"]')];
    expect(starters.map(b => b.textContent)).to.deep.equal(['How long does shipping take?', 'Do you rent tents?']);
    const replied = oneEvent(h.el, 'persona-chat-message');
    starters[0]!.click();
    expect((await replied).content).to.match(/3 to 5 business days/);
    expect(h.userMessages()).to.deep.equal(['How long does shipping take?']);
    expect(h.root.querySelector('[part="starter"]')).to.equal(null, 'gone once the conversation began');
    h.el.starters = ['One', 'Two', 'Three'];
    await h.el.newConversation();
    expect([...h.root.querySelectorAll('[part="starter"]')].length).to.equal(3, 'a property too');
  });

  it('counts replies that finish while the panel is closed on the launcher, and clears them on open', async () => {
    const h = await chat(
      html`<persona-chat endpoint="/persona-chat" storage="none" persona-id=${juniper}></persona-chat>`,
    );
    const launcher = h.root.querySelector<HTMLButtonElement>('[part="launcher"]')!;
    const replied = oneEvent(h.el, 'persona-chat-message');
    void h.el.send('How long does shipping take?').catch(() => {});
    await replied;
    await h.el.updateComplete;
    expect(h.root.querySelector('[part="unread-badge"]')!.textContent).to.equal('1');
    expect(launcher.getAttribute('aria-label')).to.equal('Open chat: 1 new reply');
    expect(h.root.querySelector('[aria-live="polite"]')!.textContent!.trim()).to.equal('1 new reply');
    await h.el.show();
    expect(h.root.querySelector('[part="unread-badge"]')).to.equal(null);
    expect(launcher.getAttribute('aria-label')).to.equal('Close chat');
  });

  it('shows the error state without an endpoint', async () => {
    const el = await fixture<PersonaChat>(html`<persona-chat mode="inline"></persona-chat>`);
    expect(el.shadowRoot!.querySelector('[role="alert"]')!.textContent).to.contain('not set up correctly');
    await expect(el).to.be.accessible();
  });

  describe('launcher', () => {
    it('opens and closes by button and Escape, moving focus, and is accessible closed and open', async () => {
      const el = await fixture<PersonaChat>(
        html`<persona-chat endpoint="/persona-chat" heading="Trailhead help" storage="none"></persona-chat>`,
      );
      await expect(el).to.be.accessible();
      const launcher = el.shadowRoot!.querySelector<HTMLButtonElement>('[part="launcher"]')!;
      expect(launcher.getAttribute('aria-expanded')).to.equal('false');
      const opened = oneEvent(el, 'persona-chat-open');
      launcher.click();
      await opened;
      await el.updateComplete;
      expect(el.open).to.equal(true);
      expect(el.hasAttribute('open')).to.equal(true);
      const panel = el.shadowRoot!.querySelector('[part="panel"]')!;
      expect(panel.localName).to.equal('dialog');
      expect(panel.matches(':modal'), 'beside the page, not modal').to.equal(false);
      expect(panel.getAttribute('aria-label')).to.equal('Trailhead help');
      expect(el.shadowRoot!.activeElement).to.equal(el.shadowRoot!.querySelector('textarea'));
      await expect(el).to.be.accessible();
      const closed = oneEvent(el, 'persona-chat-close');
      el.shadowRoot!.querySelector('textarea')!.dispatchEvent(
        new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }),
      );
      await closed;
      await el.updateComplete;
      expect(el.open).to.equal(false);
      expect(el.shadowRoot!.activeElement).to.equal(launcher);
    });
  });

  it('is accessible while streaming and after an error', async () => {
    await faults({ chunkDelayMs: 60 });
    const h = await chat();
    void h.el.send('How do I return a tent?').catch(() => {});
    await h.writing();
    await expect(h.el).to.be.accessible();
    await h.el.stop();
    await faults({ chunkDelayMs: 0, status: { code: 500, count: 1, on: 'continue' } });
    const failed = oneEvent(h.el, 'persona-chat-error');
    void h.el.send('Again?').catch(() => {});
    await failed;
    await h.status('failed');
    await expect(h.el).to.be.accessible();
  });

  it('uses a fetch set on the element before it was defined, from the first request', async () => {
    const seen: string[] = [];
    const el = document.createElement('persona-chat-late') as PersonaChat;
    el.setAttribute('endpoint', `${location.origin}/persona-chat`);
    el.setAttribute('mode', 'inline');
    el.setAttribute('storage', 'none');
    el.setAttribute('persona-id', juniper);
    el.fetch = (input, init) => {
      seen.push(String(input));
      return fetch(input, init);
    };
    document.body.append(el);
    try {
      customElements.define('persona-chat-late', class extends PersonaChat {});
      await el.updateComplete;
      await el.send('Do you rent tents?');
      expect(seen[0]).to.match(/\/session$/, 'the session came through the host fetch');
      expect(seen.some(url => url.endsWith('/messages'))).to.equal(true);
    } finally {
      el.remove();
    }
  });
});

describe('<persona-chat> on a strict-CSP page', () => {
  it('chats with no CSP or Trusted Types violation', async () => {
    const frame = document.createElement('iframe');
    frame.src = '/test-support/csp.html';
    document.body.append(frame);
    try {
      await waitUntil(() => (frame.contentWindow as { chatOutcome?: unknown } | null)?.chatOutcome, 'the page ran', {
        timeout: 10_000,
      });
      const win = frame.contentWindow as unknown as {
        chatOutcome: Promise<Record<string, unknown>>;
        violations: string[];
      };
      const outcome = await win.chatOutcome;
      expect(outcome.content).to.match(/3 to 5 business days/);
      expect(outcome.footnotes).to.equal(1);
      expect(outcome.sources).to.equal(1);
      expect(outcome.styled).to.equal('12px', 'the constructable stylesheet applied');
      expect(win.violations).to.deep.equal([]);
    } finally {
      frame.remove();
    }
  });
});
