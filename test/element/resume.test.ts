// Replies that survive the page: a reload, a second tab, a dropped network. The backend keeps each reply as a run;
// the element follows it again after the last event it saw.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { executeServerCommand } from '@web/test-runner-commands';
import type { PersonaChat } from '../../src/element/persona-chat.js';
import { Harness, ada, chat, continues, faults, juniper, resetAll, stored, upstreamEnded } from './harness.js';

/** A tab of the site: a frame with a plain host page holding one element. */
async function tab(persona = juniper, storage = 'local') {
  const frame = document.createElement('iframe');
  frame.src = `/test-support/host.html?persona=${persona}&storage=${storage}`;
  document.body.append(frame);
  return { frame, element: () => element(frame) };
}

/** The frame's element once it is defined and rendered; a new one after each reload. */
async function element(frame: HTMLIFrameElement, previous?: PersonaChat): Promise<Harness> {
  await waitUntil(
    () => {
      const el = frame.contentDocument?.querySelector<PersonaChat>('persona-chat');
      return el && el !== previous && el.shadowRoot?.querySelector('textarea');
    },
    'the page shows its chat',
    { timeout: 10_000 },
  );
  return new Harness(frame.contentDocument!.querySelector<PersonaChat>('persona-chat')!);
}

/** The conversation id the element keeps, from the messages it shows after a restore. */
const conversationOf = (h: Harness) =>
  new Promise<string>(resolve =>
    h.el.addEventListener('persona-chat-conversation', e => resolve(e.conversationId), { once: true }),
  );

const frames: HTMLIFrameElement[] = [];

/**
 * The connection states the element shows from now on, each with the status its reply says then (null for none),
 * and whether the custom state agrees: recorded as each change happens, since a reconnection can last a moment.
 */
function connection(h: Harness) {
  const seen: unknown[][] = [];
  new MutationObserver(() => {
    const state = h.el.connectionState;
    const status = h.lastReply()?.querySelector('[role="status"]')?.textContent ?? null;
    seen.push(h.el.matches(`:state(${state})`) ? [state, status] : ['no custom state', state]);
  }).observe(h.el, { attributeFilter: ['connection-state'] });
  return seen;
}

/** Opens a tab of the site and gives its element. */
async function openTab(storage = 'local') {
  const opened = await tab(juniper, storage);
  frames.push(opened.frame);
  return opened.element();
}

/** The text of a reply as drawn. */
const drawn = (reply: HTMLElement | undefined) => reply?.querySelector('.markdown')?.textContent ?? null;

/** Waits until the tab shows these messages of the visitor, each with its reply, and none is being answered. */
async function shows(h: Harness, messages: string[]) {
  await waitUntil(
    () =>
      h.userMessages().join('\n') === messages.join('\n') &&
      h.replies().length === messages.length &&
      !['queued', 'accepting', 'streaming'].includes(h.el.getAttribute('turn-status')!),
    `the tab shows ${JSON.stringify(messages)}`,
    { timeout: 15_000 },
  );
}

/** How many times the service was asked to answer `message`. */
const asked = async (message: string) => (await continues()).filter(c => c.message === message).length;

/** A tab whose reply to its first message was stopped while it was being written. */
async function stoppedInTab() {
  await faults({ chunkDelayMs: 40 });
  const { frame, element: first } = await tab();
  frames.push(frame);
  const h = await first();
  void h.el.send('How do I return a tent?').catch(() => {});
  await h.writing();
  await h.el.stop();
  await h.status('stopped');
  return { frame, h };
}

describe('<persona-chat> across reloads, tabs and networks', () => {
  beforeEach(resetAll);
  afterEach(() => frames.splice(0).forEach(frame => frame.remove()));

  it('goes on with a reply after a reload: the question is shown and the reply ends complete, sent once', async () => {
    await faults({ chunkDelayMs: 60 });
    const { frame, element: first } = await tab();
    frames.push(frame);
    const h = await first();
    const started = conversationOf(h);
    void h.el.send('How do I return a tent?').catch(() => {});
    const conversationId = await started;
    await h.writing();
    frame.contentWindow!.location.reload();
    const again = await element(frame, h.el);
    await waitUntil(() => again.userMessages()[0] === 'How do I return a tent?', 'the question is shown', {
      timeout: 8000,
    });
    await again.status('done', 15_000);
    const kept = await stored(conversationId);
    const text = kept.chatMessages[1]!.content;
    expect(again.lastReply()!.querySelector('.markdown')!.textContent).to.contain(text.split('\n')[0]);
    expect(again.userMessages()).to.deep.equal(['How do I return a tent?']);
    expect((await continues()).filter(c => c.message === 'How do I return a tent?').length).to.equal(1);
  });

  it('counts on the launcher a reply that ends after a reload, while the panel is shut', async function () {
    this.timeout(30_000);
    await faults({ chunkDelayMs: 60 });
    const frame = document.createElement('iframe');
    frame.src = `/test-support/host.html?persona=${juniper}&storage=local&mode=launcher`;
    document.body.append(frame);
    frames.push(frame);
    const shown = (previous?: PersonaChat) =>
      waitUntil(
        () => {
          const el = frame.contentDocument?.querySelector<PersonaChat>('persona-chat');
          return el !== previous && el?.shadowRoot?.querySelector('[part="launcher"]') && el;
        },
        'the page shows its launcher',
        { timeout: 10_000 },
      ).then(() => new Harness(frame.contentDocument!.querySelector<PersonaChat>('persona-chat')!));
    const h = await shown();
    void h.el.send('How do I return a tent?').catch(() => {});
    await h.writing();
    frame.contentWindow!.location.reload();
    const again = await shown(h.el);
    expect(again.el.open, 'the panel stays shut').to.equal(false);
    await waitUntil(() => again.root.querySelector('[part="unread-badge"]'), 'the badge', { timeout: 15_000 });
    expect(again.root.querySelector('[part="unread-badge"]')!.textContent).to.equal('1');
    expect(again.el.turnStatus).to.equal('done');
    expect((await continues()).filter(c => c.message === 'How do I return a tent?').length).to.equal(1, 'sent once');
  });

  it('hands a reply over when its backend instance restarts: it goes on elsewhere and ends complete, sent once', async () => {
    // Slow enough that the reply cannot end before the restart, however long a loaded machine takes to ask for it.
    await faults({ chunkDelayMs: 1000 });
    const h = await chat();
    const errors: string[] = [];
    h.el.addEventListener('persona-chat-error', e => errors.push(e.code));
    const started = conversationOf(h);
    void h.el.send('How do I return a tent?').catch(() => {});
    const conversationId = await started;
    await h.writing();
    // A deploy: the instance producing the reply drains at once; a new one takes the traffic.
    await fetch('/test-support/restart-backend?grace=0');
    await faults({ chunkDelayMs: 0 });
    await h.status('done', 15_000);
    const kept = await stored(conversationId);
    expect(kept.chatMessages.map(m => m.role)).to.deep.equal(['user', 'assistant'], 'one message in the service');
    expect(h.lastReply()!.querySelector('.markdown')!.textContent).to.contain(
      kept.chatMessages[1]!.content.split('\n')[0],
    );
    const sent = (await continues()).filter(c => c.message === 'How do I return a tent?');
    expect(sent.map(c => c.aborted)).to.deep.equal([true, false], 'cut on the old instance, sent again on the new');
    expect(errors).to.deep.equal([], 'the visitor saw no error');
    expect(h.statuses()).to.deep.equal(['done']);
  });

  it('asks again on its own, on opening, for the newest reply its instance left interrupted: once, no click', async () => {
    // Slow enough that the reply cannot end before the crash, however long a loaded machine takes to cause it.
    await faults({ chunkDelayMs: 1000 });
    const h = await chat();
    const started = conversationOf(h);
    void h.el.send('How do I return a tent?').catch(() => {});
    const conversationId = await started;
    await h.writing();
    // The page goes away (a reload, a closed tab), and then the instance producing its reply dies.
    h.el.remove();
    await fetch('/test-support/restart-backend?crash=1');
    await faults({ chunkDelayMs: 0 });
    const again = await chat();
    const errors: string[] = [];
    again.el.addEventListener('persona-chat-error', e => errors.push(e.code));
    await again.status('done', 15_000);
    const kept = await stored(conversationId);
    expect(kept.chatMessages.map(m => m.role)).to.deep.equal(['user', 'assistant'], 'one message in the service');
    const sent = (await continues()).filter(c => c.message === 'How do I return a tent?');
    expect(sent.map(c => c.aborted)).to.deep.equal([true, false], 'cut by the crash, asked again once');
    expect(errors).to.deep.equal([], 'the visitor saw no error');
    expect(again.retryButton).to.equal(null);
    expect(again.statuses()).to.deep.equal(['done']);
  });

  it('shows a reply being written in a second tab opened meanwhile, and follows it to its end', async () => {
    await faults({ chunkDelayMs: 60 });
    const one = await tab();
    frames.push(one.frame);
    const a = await one.element();
    const reply = a.el.send('How do I return a tent?');
    await a.writing();
    const two = await tab();
    frames.push(two.frame);
    const b = await two.element();
    await waitUntil(() => b.userMessages()[0] === 'How do I return a tent?', 'the second tab shows the question', {
      timeout: 8000,
    });
    const { content } = await reply;
    await b.status('done', 15_000);
    expect(b.lastReply()!.querySelector('.markdown')!.textContent!.replace(/\s+/g, ' ')).to.contain(
      content.split('\n')[0]!.replace(/\*\*/g, '').trim(),
    );
    expect((await continues()).length).to.equal(1);
  });

  it('shows a stopped reply after a reload, as it was stopped', async () => {
    const { frame, h } = await stoppedInTab();
    await upstreamEnded('the reply ended upstream');
    frame.contentWindow!.location.reload();
    const again = await element(frame, h.el);
    await again.status('stopped');
    expect(again.userMessages()).to.deep.equal(['How do I return a tent?']);
    expect(again.lastReply()!.textContent).to.contain('Stopped.');
    expect(again.lastReply()!.querySelector('.markdown')!.textContent!.trim()).to.not.equal('');
    expect(again.retryButton).to.not.equal(null);
  });

  it('follows a reply again after the network dropped for 3 s: nothing lost or repeated, sent once', async () => {
    // The drop: the test server cuts the page's open reply streams, and the page is offline (CDP) for 3 s.
    await faults({ chunkDelayMs: 100 });
    const h = await chat();
    const requests: { url: string; lastEventId: string | null }[] = [];
    const real = h.el.fetch;
    h.el.fetch = (input, init) => {
      requests.push({ url: String(input), lastEventId: new Headers(init?.headers).get('last-event-id') });
      return real(input, init);
    };
    const started = conversationOf(h);
    const reply = h.el.send('How do I return a tent?');
    const conversationId = await started;
    await h.writing();
    const seen = connection(h);
    await executeServerCommand('offline', { ms: 3000 });
    const { content } = await reply;
    // Offline where the browser knows it (Chromium, whose driver sets it), else the stream cut and followed again.
    const offline = ['offline', 'Offline: the reply will continue when you are back online.'];
    const reconnecting = ['reconnecting', 'Reconnecting…'];
    expect(String(seen[0]), 'the drop is said').to.be.oneOf([String(offline), String(reconnecting)]);
    expect(seen.at(-1), 'and cleared once the reply goes on').to.deep.equal(['online', null]);
    const followed = requests.filter(r => r.url.includes('/runs/') && r.url.endsWith('/events'));
    expect(followed.length, 'followed the run again').to.be.greaterThan(0);
    expect(followed.at(-1)!.lastEventId).to.match(/^\d+-\d+$/);
    const kept = await stored(conversationId);
    expect(content).to.equal(kept.chatMessages[1]!.content, 'no text lost or repeated');
    expect((await continues()).length).to.equal(1);
    await h.status('done');
  });

  it('follows a reply again on a new connection when its stream stalls, saying so until it goes on', async () => {
    await faults({ chunkDelayMs: 100 });
    const h = await chat();
    const started = conversationOf(h);
    const reply = h.el.send('How do I return a tent?');
    const conversationId = await started;
    await h.writing();
    expect(h.el.connectionState).to.equal('online');
    const seen = connection(h);
    await executeServerCommand('stall');
    const { content } = await reply;
    expect(seen, 'the stall is seen and said, until the reply goes on').to.deep.equal([
      ['reconnecting', 'Reconnecting…'],
      ['online', null],
    ]);
    expect(h.lastReply()!.querySelector('[role="status"]'), 'the status is gone').to.equal(null);
    const kept = await stored(conversationId);
    expect(content).to.equal(kept.chatMessages[1]!.content, 'no text lost or repeated');
    expect((await continues()).length).to.equal(1, 'sent once');
  });

  it('mints one visitor for two widgets of one page on a first visit', async () => {
    await fetch('/test-support/forget-visitor', { method: 'POST' });
    // An endpoint no other test of this page used: no session is known for it yet.
    const endpoint = `${location.origin}/persona-chat`;
    const box = await fixture<HTMLDivElement>(html`<div>
      <persona-chat endpoint=${endpoint} mode="inline" storage="local" persona-id=${juniper}></persona-chat>
      <persona-chat endpoint=${endpoint} mode="inline" storage="local" persona-id=${ada}></persona-chat>
    </div>`);
    const [a, b] = [...box.querySelectorAll<PersonaChat>('persona-chat')].map(el => new Harness(el));
    const started = Promise.all([a!, b!].map(h => conversationOf(h)));
    await Promise.all([a!.el.send('Do you rent tents?'), b!.el.send('How do I theme the widget?')]);
    const ids = await started;
    const owners = await Promise.all(ids.map(async id => (await stored(id)).externalUserId));
    expect(owners[0]).to.equal(owners[1], 'one visitor');
  });

  it('mints one visitor for two tabs opened at once on a first visit', async () => {
    await fetch('/test-support/forget-visitor', { method: 'POST' });
    const tabs = await Promise.all([tab(juniper), tab(ada)]);
    frames.push(...tabs.map(t => t.frame));
    const [a, b] = await Promise.all(tabs.map(t => t.element()));
    const started = Promise.all([a!, b!].map(h => conversationOf(h)));
    await Promise.all([a!.el.send('Do you rent tents?'), b!.el.send('How do I theme the widget?')]);
    const ids = await started;
    const owners = await Promise.all(ids.map(async id => (await stored(id)).externalUserId));
    expect(owners[0]).to.equal(owners[1], 'one visitor');
    // And after a reload each tab still finds its conversation.
    tabs[0]!.frame.contentWindow!.location.reload();
    const again = await element(tabs[0]!.frame, a!.el);
    await waitUntil(() => again.userMessages()[0] === 'Do you rent tents?', 'the conversation is restored', {
      timeout: 8000,
    });
  });

  for (const [what, held, earlier] of [
    ['a later message, before it left the page', /\/messages$/, ['Do you rent tents?']],
    ['a first message, while its conversation was being created', /\/conversations$/, []],
  ] as const) {
    it(`gives back ${what}, when a reload cut it off`, async () => {
      const { frame, element: first } = await tab();
      frames.push(frame);
      const h = await first();
      for (const text of earlier) await h.el.send(text);
      // The request is held: the reload cuts it off before the backend accepted the message.
      h.el.fetch = async (input, init) => {
        if (held.test(String(input))) return new Promise<Response>(() => {});
        return fetch(input, init);
      };
      void h.el.send('Is this kept?').catch(() => {});
      await h.status('accepting');
      frame.contentWindow!.location.reload();
      const again = await element(frame, h.el);
      await waitUntil(() => again.input.value === 'Is this kept?', 'the text is back in the message box', {
        timeout: 8000,
      });
      expect(again.userMessages()).to.deep.equal(earlier);
      expect((await continues()).map(c => c.message)).to.deep.equal(earlier);
    });
  }

  it('leaves a message another element of the page is sending to that element', async () => {
    await faults({ chunkDelayMs: 40 });
    const a = await chat();
    const real = a.el.fetch;
    let held: (() => void) | undefined;
    a.el.fetch = async (input, init) => {
      // A slow network before the backend accepts the message.
      if (String(input).endsWith('/messages')) await new Promise<void>(resolve => (held = resolve));
      return real(input, init);
    };
    const sent = a.el.send('Sent by the first widget');
    await a.status('accepting');
    // The conversation may still be being created: wait for the message itself to be on its way.
    await waitUntil(() => held, 'the message is being sent');
    const b = await chat();
    await b.el.updateComplete;
    expect(b.input.value, "the second widget's message box").to.equal('');
    held!();
    await sent;
    expect(b.input.value).to.equal('');
  });

  it('shows a stopped reply of an earlier exchange where it was, without Retry, after a reload', async () => {
    const { frame, h } = await stoppedInTab();
    await faults({ chunkDelayMs: 0 });
    await h.el.send('Do you rent tents?');
    frame.contentWindow!.location.reload();
    const again = await element(frame, h.el);
    await waitUntil(() => again.userMessages().length === 2, 'both are shown', { timeout: 8000 });
    expect(again.userMessages()).to.deep.equal(['How do I return a tent?', 'Do you rent tents?']);
    expect(again.statuses()).to.deep.equal(['stopped']);
    expect(again.retryButton, 'no Retry on an exchange that is not the newest').to.equal(null);
  });

  describe('kept in step across tabs', function () {
    // Up to four tabs and as many exchanges: more than one test's usual time on a busy machine.
    this.timeout(40_000);

    it('shows a message sent in another tab of the conversation, with its whole reply, asking the service once', async () => {
      await faults({ chunkDelayMs: 20 });
      const a = await openTab();
      const b = await openTab();
      await a.el.send('Do you rent tents?');
      // The first message made the conversation: the other tab switched to it and shows it, however it learnt of it.
      await shows(b, ['Do you rent tents?']);
      const sent = a.el.send('What does membership cost?');
      await waitUntil(() => b.userMessages().length === 2, 'the other tab shows the message');
      await b.status('done', 15_000);
      await sent;
      await shows(a, ['Do you rent tents?', 'What does membership cost?']);
      await shows(b, ['Do you rent tents?', 'What does membership cost?']);
      expect(drawn(a.lastReply())).to.contain('Membership');
      expect(drawn(b.lastReply())).to.equal(drawn(a.lastReply()));
      expect(await asked('What does membership cost?')).to.equal(1);
      expect(await asked('Do you rent tents?')).to.equal(1);
    });

    it('shows a message sent while another tab opens once, however the tab learns of it', async () => {
      const a = await openTab();
      await a.el.send('Do you rent tents?');
      // The tab loads the conversation while the message is taken and answered: it may be told of the message, find
      // its run, or find it in the service's history, or all of these.
      const [b] = await Promise.all([openTab(), a.el.send('What does membership cost?')]);
      await shows(b, ['Do you rent tents?', 'What does membership cost?']);
      expect(drawn(b.lastReply())).to.equal(drawn(a.lastReply()));
      expect(await asked('What does membership cost?')).to.equal(1);
    });

    it('keeps a stop, a Retry and a new conversation in one tab in step in the other', async () => {
      await faults({ chunkDelayMs: 40 });
      const a = await openTab();
      const b = await openTab();
      await a.el.send('Do you rent tents?');
      await shows(b, ['Do you rent tents?']);
      void a.el.send('How do I return a tent?').catch(() => {});
      await b.writing();
      await a.el.stop();
      await b.status('stopped');
      await faults({ chunkDelayMs: 0 });
      a.retryButton!.click();
      await a.status('done');
      await b.status('done');
      await shows(b, ['Do you rent tents?', 'How do I return a tent?']);
      expect(drawn(a.lastReply())).to.contain('Returns');
      expect(drawn(b.lastReply())).to.equal(drawn(a.lastReply()));
      await a.el.newConversation();
      await waitUntil(() => b.userMessages().length === 0, 'the other tab starts afresh too');
    });

    it("leaves a tab on another conversation, and another visitor's tab, as they are", async () => {
      await faults({ chunkDelayMs: 20 });
      // The same visitor, keeping its conversation in this tab alone.
      const own = await openTab('session');
      await own.el.send('How long does shipping take?');
      const a = await openTab();
      const b = await openTab();
      await a.el.send('Do you rent tents?');
      await shows(b, ['Do you rent tents?']);
      // Another visitor of this browser, after the first one's cookie was forgotten.
      await fetch('/test-support/forget-visitor', { method: 'POST' });
      const stranger = await openTab();
      await stranger.el.send('How do I return a tent?');
      await a.el.send('What does membership cost?');
      await shows(b, ['Do you rent tents?', 'What does membership cost?']);
      expect(own.userMessages()).to.deep.equal(['How long does shipping take?']);
      expect(stranger.userMessages()).to.deep.equal(['How do I return a tent?']);
      expect(await asked('What does membership cost?')).to.equal(1);
    });
  });

  it('keeps the unsent draft across a reload', async () => {
    const { frame, element: first } = await tab();
    frames.push(frame);
    const h = await first();
    await h.type('Half a thought');
    frame.contentWindow!.location.reload();
    const again = await element(frame, h.el);
    await waitUntil(() => again.input.value === 'Half a thought', 'the draft is back', { timeout: 5000 });
  });
});
