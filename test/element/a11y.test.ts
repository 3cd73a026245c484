// The accessibility sweep: axe-core (WCAG 2.0-2.2 A and AA, and best practice; open shadow roots included) over
// every state a visitor meets, in a host page as sites are made (a banner with the site's name and navigation, main
// content with its heading, a footer with links of its own), light and dark, with the default palette and
// with a site that sets only its accent colour. Replies come from the real backend and emulator; the one with a
// code block, a table and a task list from the stand-in model of the hostile stack.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { emulateMedia, executeServerCommand, sendKeys, setViewport } from '@web/test-runner-commands';
import type { PersonaChat } from '../../src/element/persona-chat.js';
import { Harness, faults, juniper, oneEvent, resetAll } from './harness.js';

interface AxeResult {
  violations: { id: string; impact: string; nodes: { target: unknown[]; failureSummary: string }[] }[];
}
declare global {
  interface Window {
    axe?: { run(context: Element, options: object): Promise<AxeResult> };
  }
}

async function loadAxe() {
  if (window.axe) return window.axe;
  const script = document.createElement('script');
  script.src = '/node_modules/axe-core/axe.min.js';
  const loaded = new Promise((resolve, reject) => {
    script.onload = resolve;
    script.onerror = reject;
  });
  document.head.append(script);
  await loaded;
  return window.axe!;
}

/** Every violation axe finds in `context`, one line each: the rule and where. */
async function audit(context: Element): Promise<string[]> {
  const axe = await loadAxe();
  const result = await axe.run(context, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    resultTypes: ['violations'],
  });
  return result.violations.flatMap(violation =>
    violation.nodes.map(node => `${violation.id}: ${JSON.stringify(node.target)} ${node.failureSummary}`),
  );
}

type Palette = 'default' | 'accent only';

/**
 * A host page with its own banner, main content and heading, and the element in its main content, or (`beside`) at
 * the page's top level, where a site puts a launcher, beside its banner and its footer.
 */
async function host(element: ReturnType<typeof html>, palette: Palette, beside = false) {
  const page = await fixture<HTMLElement>(html`<div
    style=${palette === 'accent only' ? '--persona-chat-accent-color: #0e7490' : ''}
  >
    <header>
      <p><a href="#">Trailhead Outfitters</a></p>
      <nav aria-label="Main">
        <ul style="display: flex; gap: 8px; margin: 0; padding: 0; list-style: none">
          <li><a href="#" style="display: block; padding: 8px">Tents</a></li>
          <li><a href="#" style="display: block; padding: 8px">Rentals</a></li>
          <li><a href="#" style="display: block; padding: 8px" aria-current="page">Help</a></li>
        </ul>
      </nav>
    </header>
    <main>
      <h1>Help centre</h1>
      <p>Questions about an order? Ask below.</p>
      ${beside ? '' : element}
    </main>
    <footer>
      <nav aria-label="Footer"><a href="#">Shipping</a> · <a href="#">Returns</a> · <a href="#">Privacy</a></nav>
      <p>© Trailhead Outfitters</p>
    </footer>
    ${beside ? element : ''}
  </div>`);
  return { page, h: new Harness(page.querySelector('persona-chat') as PersonaChat) };
}

const launcher = (attributes = '') =>
  html`<persona-chat
    endpoint="/persona-chat"
    storage="none"
    heading="Juniper"
    greeting="Hi! How can I help?"
    persona-id=${juniper}
    theme=${attributes.includes('dark') ? 'dark' : 'light'}
    lang=${attributes.includes('rtl') ? 'ar' : 'en'}
    starters=${attributes.includes('starters') ? 'Where is my order?|Do you rent tents?' : ''}
  ></persona-chat>`;

/** Inline; the hostile stack serves one persona, its own. */
const inline = (endpoint = '/persona-chat') =>
  html`<persona-chat
    endpoint=${endpoint}
    mode="inline"
    storage="none"
    heading="Juniper"
    greeting="Hi! How can I help?"
    persona-id=${endpoint === '/persona-chat' ? juniper : ''}
    style="height: 560px"
  ></persona-chat>`;

async function ask(h: Harness, text: string) {
  const replied = oneEvent(h.el, 'persona-chat-message');
  void h.el.send(text).catch(() => {});
  return replied;
}

/** A dropped network being played, which the next test waits out. */
let dropped: Promise<unknown> | undefined;

/** The states a visitor meets, each reached for real. */
const states: [string, (palette: Palette) => Promise<HTMLElement>][] = [
  ['launcher closed', async palette => (await host(launcher(), palette)).page],
  [
    'open, with the greeting and starters',
    async palette => {
      const { page, h } = await host(launcher('starters'), palette);
      await h.el.show();
      return page;
    },
  ],
  [
    'open at the page’s top level, beside its banner',
    async palette => {
      const { page, h } = await host(launcher(), palette, true);
      await h.el.show();
      return page;
    },
  ],
  [
    'streaming',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await faults({ chunkDelayMs: 150 });
      void h.el.send('How long does shipping take?').catch(() => {});
      await h.writing();
      return page;
    },
  ],
  [
    'a finished reply with its two Sources, one expanded, and feedback given',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await ask(h, 'Do you rent tents?');
      expect(h.lastReply()!.querySelectorAll('[part="citations"] li').length, 'two sources').to.equal(2);
      // WCAG 2.2's target size (2.5.8), which axe leaves for a person to check inside a scrolled list.
      const controls = [...h.lastReply()!.querySelectorAll('[part="citations"] li > :is(button, a)')];
      const heights = controls.map(control => Math.round(control.getBoundingClientRect().height));
      expect(heights.length, 'each source’s name and link').to.equal(4);
      expect(Math.min(...heights), 'each at least 24 px high').to.be.at.least(24);
      await h.settled();
      h.lastReply()!.querySelector<HTMLElement>('sup.cite a')!.click();
      await h.el.updateComplete;
      h.root.querySelector<HTMLButtonElement>(`[aria-label="${'Not helpful'}"]`)!.click();
      await waitUntil(() => h.root.querySelector('.comment textarea'), 'the comment box');
      return page;
    },
  ],
  [
    'a comment sent with a thumbs-down, shown back under its reply',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await ask(h, 'Do you rent tents?');
      await h.settled();
      h.root.querySelector<HTMLButtonElement>(`[aria-label="${'Not helpful'}"]`)!.click();
      await waitUntil(() => h.root.querySelector('.comment textarea'), 'the comment box');
      h.root.querySelector<HTMLTextAreaElement>('.comment textarea')!.value = 'Which sizes?';
      h.root.querySelector<HTMLButtonElement>('.comment [type="submit"]')!.click();
      await waitUntil(() => h.root.querySelector('.given q'), 'the comment shown back');
      return page;
    },
  ],
  [
    'an error',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await faults({ status: { code: 500, count: null, on: 'continue' } });
      void h.el.send('Where is my order?').catch(() => {});
      await waitUntil(() => h.root.querySelector('.item[data-status="failed"] [part="error"]'), 'the error');
      await h.el.updateComplete;
      return page;
    },
  ],
  [
    'the network lost mid-reply, the reply saying so',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await faults({ chunkDelayMs: 150 });
      void h.el.send('How long does shipping take?').catch(() => {});
      await h.writing();
      // Offline (Chromium), or the streams cut and every request failing (elsewhere), for long enough to look.
      dropped = executeServerCommand('offline', { ms: 8000 });
      await waitUntil(() => h.lastReply()?.querySelector('.reconnecting'), 'the status', { timeout: 8000 });
      return page;
    },
  ],
  [
    'stopped, with Retry',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await faults({ chunkDelayMs: 150 });
      void h.el.send('How long does shipping take?').catch(() => {});
      await h.writing();
      await h.el.stop();
      await h.status('stopped');
      return page;
    },
  ],
  [
    'dark, open with a reply',
    async palette => {
      const { page, h } = await host(launcher('dark'), palette);
      await h.el.show();
      await ask(h, 'How long does shipping take?');
      await h.settled();
      return page;
    },
  ],
  [
    'right to left, open with a reply',
    async palette => {
      const { page, h } = await host(launcher('rtl'), palette);
      await h.el.show();
      await waitUntil(() => h.root.querySelector('[part="panel"][lang="ar"]'), 'Arabic');
      await ask(h, 'How long does shipping take?');
      await h.settled();
      return page;
    },
  ],
  [
    'a code block, a table and a task list',
    async palette => {
      const { page, h } = await host(inline('/hostile-chat'), palette);
      await ask(h, 'How long does shipping take? Answer with a code block.');
      await h.settled();
      const pre = h.lastReply()!.querySelector('pre')!;
      expect(pre.scrollWidth, 'the code block scrolls').to.be.greaterThan(pre.clientWidth);
      expect(h.lastReply()!.querySelector('table, input[type="checkbox"]')).to.not.equal(null);
      return page;
    },
  ],
  [
    'the history view',
    async palette => {
      const { page, h } = await host(inline(), palette);
      await ask(h, 'Do you rent tents?');
      await h.settled();
      h.root.querySelector<HTMLButtonElement>('[part="history-button"]')!.click();
      await waitUntil(() => h.root.querySelector('.history[aria-busy="false"]'), 'the list', { timeout: 5000 });
      return page;
    },
  ],
];

/**
 * The viewport and the colour scheme are set through the test runner. Its WebKit launcher (plain WebDriver) sizes
 * the window, which WebKit's MiniBrowser keeps at least 447 px wide: there a narrow viewport is 460 px, still below
 * the panel's 480 px breakpoint. It cannot emulate a colour scheme: a test that needs one is skipped there.
 */
async function viewport(test: Mocha.Context, width: number, height: number) {
  await setViewport({ width, height })
    .catch(() => (width < 460 ? setViewport({ width: 460, height }) : Promise.reject(new Error('no viewport'))))
    .catch(() => test.skip());
}
async function scheme(test: Mocha.Context, colorScheme: 'light' | 'dark') {
  await emulateMedia({ colorScheme }).catch(() => test.skip());
}

describe('accessibility sweep (axe)', function () {
  this.timeout(60_000);
  beforeEach(resetAll);
  afterEach(async () => {
    await dropped;
    dropped = undefined;
    await faults({ chunkDelayMs: 0, status: null });
    await setViewport({ width: 800, height: 600 }).catch(() => {});
    await emulateMedia({ colorScheme: 'light' }).catch(() => {});
  });

  for (const palette of ['default', 'accent only'] as const) {
    for (const [name, reach] of states) {
      it(`finds nothing to fix: ${name} (${palette} palette)`, async () => {
        const page = await reach(palette);
        expect(await audit(page)).to.deep.equal([]);
      });
    }
    it(`finds nothing to fix: open at 320 px (${palette} palette)`, async function () {
      await viewport(this, 320, 640);
      const { page, h } = await host(launcher(), palette);
      await h.el.show();
      expect(await audit(page)).to.deep.equal([]);
    });
    it(`finds nothing to fix: the system's dark scheme (${palette} palette)`, async function () {
      await scheme(this, 'dark');
      const { page, h } = await host(inline(), palette);
      await ask(h, 'How long does shipping take?');
      await h.settled();
      expect(await audit(page)).to.deep.equal([]);
    });
  }

  it('can fail: a violation brought in is found', async () => {
    const { page } = await host(inline(), 'default');
    page.querySelector('main')!.insertAdjacentHTML('beforeend', '<p style="color:#bbb;background:#fff">faint</p>');
    const found = await audit(page);
    expect(found.some(line => line.startsWith('color-contrast'))).to.equal(true);
  });
});

describe('keyboard and screen reader', function () {
  this.timeout(60_000);
  beforeEach(resetAll);
  afterEach(() => faults({ chunkDelayMs: 0, status: null }));

  it('reads each finished reply out once, as plain text after its speaker, over ten replies', async () => {
    const { h } = await host(inline(), 'default');
    const live = h.root.querySelector('.live')!;
    const heard: string[] = [];
    new MutationObserver(() => heard.push(live.textContent ?? '')).observe(live, {
      childList: true,
      characterData: true,
      subtree: true,
    });
    for (let i = 0; i < 10; i++) {
      await ask(h, i % 2 ? 'How long does shipping take?' : 'How do I return a tent?');
      await h.settled();
      await waitUntil(() => heard.filter(text => text.startsWith('Juniper said:')).length === i + 1, `reply ${i + 1}`);
    }
    const replies = heard.filter(text => text.startsWith('Juniper said:'));
    expect(replies).to.have.length(10);
    for (const text of replies) expect(text).not.to.match(/\*\*|\[\d+\]|#/);
    expect(
      heard.filter(text => text === 'Typing…'),
      'a short busy announcement per message',
    ).to.have.length(10);
  });

  it('reads a long reply out up to its first 2,000 characters, then an ellipsis', async () => {
    // The stand-in model of the hostile stack answers this with a table of 3,000 rows, 195 KB of markdown.
    const h = new Harness(
      await fixture<PersonaChat>(
        html`<persona-chat endpoint="/hostile-chat" mode="inline" storage="none"></persona-chat>`,
      ),
    );
    const live = h.root.querySelector('.live')!;
    const heard: string[] = [];
    new MutationObserver(() => heard.push(live.textContent ?? '')).observe(live, {
      childList: true,
      characterData: true,
      subtree: true,
    });
    void h.el.send('Do you rent tents? The whole catalogue, please.').catch(() => {});
    await waitUntil(() => heard.some(text => text.startsWith('Assistant said:')), 'the reply is read out', {
      timeout: 20_000,
    });
    const said = heard.find(text => text.startsWith('Assistant said:'))!.slice('Assistant said: '.length);
    expect(said).to.match(/^Here is the whole catalogue: #ItemPriceAvailability 1Trail item #1/);
    expect(said.endsWith('…')).to.equal(true);
    expect(said.length).to.equal(2001);
  });

  it('says how many characters are left only at a few steps near the limit', async () => {
    const { h } = await host(inline(), 'default');
    const live = h.root.querySelector('.live')!;
    const heard: string[] = [];
    new MutationObserver(() => heard.push(live.textContent ?? '')).observe(live, { childList: true, subtree: true });
    await h.type('x'.repeat(3700));
    for (let length = 3790; length <= 4000; length += 5) await h.type('x'.repeat(length));
    await h.el.updateComplete;
    expect(heard).to.deep.equal([
      '200 characters left',
      '100 characters left',
      '50 characters left',
      '20 characters left',
      '10 characters left',
      '0 characters left',
    ]);
  });

  it('keeps the focus on a sensible control through Send, Stop, Retry and New conversation', async () => {
    const { h } = await host(inline(), 'default');
    await faults({ chunkDelayMs: 150 });
    h.input.focus();
    await h.type('How long does shipping take?');
    await sendKeys({ press: 'Enter' });
    await h.writing();
    expect(h.root.activeElement, 'Enter keeps the focus in the message box').to.equal(h.input);
    h.sendButton.focus();
    await sendKeys({ press: 'Enter' });
    await h.status('stopped');
    expect(h.root.activeElement, 'Stop keeps the focus on its button, now Send').to.equal(h.sendButton);
    await faults({ chunkDelayMs: 0 });
    h.retryButton!.focus();
    await sendKeys({ press: 'Enter' });
    await h.settled();
    await waitUntil(() => h.root.activeElement === h.input, 'Retry moves the focus to the message box');
    const fresh = h.root.querySelector<HTMLButtonElement>(`[aria-label="New conversation"]`)!;
    fresh.focus();
    await sendKeys({ press: 'Enter' });
    await waitUntil(() => !h.userMessages().length, 'a new conversation');
    await waitUntil(() => h.root.activeElement === h.input, 'New conversation moves the focus to the message box');
    expect(document.activeElement).not.to.equal(document.body);
  });

  it('makes the transcript one Tab stop: the newest message’s controls, then the message box; arrows move', async () => {
    const { h } = await host(inline(), 'default');
    for (const question of ['How long does shipping take?', 'Can I return an item?', 'How long does shipping take?']) {
      await ask(h, question);
      await h.settled();
    }
    const articles = [...h.root.querySelectorAll<HTMLElement>('.messages [role="article"]')];
    expect(articles.length, 'the greeting, and three questions and replies').to.equal(7);
    const newest = articles[6]!;
    h.root.querySelector<HTMLButtonElement>('[aria-label="New conversation"]')!.focus();
    const reached: Element[] = [];
    for (let i = 0; i < 30 && h.root.activeElement !== h.input; i++) {
      await sendKeys({ press: 'Tab' });
      reached.push(h.root.activeElement!);
    }
    expect(reached[0], 'the newest message first').to.equal(newest);
    expect(reached.at(-1), 'then the message box').to.equal(h.input);
    const between = reached.slice(1, -1);
    expect(between.length, 'its footnote, source and feedback controls').to.be.greaterThan(2);
    expect(
      between.every(element => newest.contains(element)),
      'only the newest message’s controls',
    ).to.equal(true);
    newest.focus();
    await sendKeys({ press: 'ArrowUp' });
    await sendKeys({ press: 'ArrowUp' });
    expect(h.root.activeElement, 'two messages up: the second reply').to.equal(articles[4]);
    await sendKeys({ press: 'Tab' });
    expect(articles[4]!.contains(h.root.activeElement), 'Tab goes into that reply').to.equal(true);
    expect(h.root.activeElement!.closest('sup.cite'), 'to its first footnote').to.not.equal(null);
  });

  it('fits the visible width when narrow, beside the page’s scrollbar: nothing to scroll sideways', async function () {
    await viewport(this, 320, 640);
    // A page long enough to scroll, with a scrollbar that takes width as on most desktops. Firefox and WebKit draw it
    // beside the page (WebKit once it is styled); headless Chromium hides its scrollbars, so there this checks less.
    const scrollbar = document.createElement('style');
    scrollbar.textContent = '::-webkit-scrollbar { width: 15px; background: #ddd }';
    document.head.append(scrollbar);
    try {
      const { page, h } = await host(launcher(), 'default');
      page.style.minHeight = '3000px';
      await h.el.show();
      await waitUntil(() => h.root.querySelector('dialog:modal'), 'the panel is modal');
      const visible = document.documentElement.clientWidth;
      const panel = h.root.querySelector('dialog')!.getBoundingClientRect();
      expect([panel.left, panel.right], 'the panel spans the visible width').to.deep.equal([0, visible]);
      expect(h.sendButton.getBoundingClientRect().right, 'Send is in view').to.be.at.most(visible);
      expect(document.documentElement.scrollWidth, 'nothing to scroll sideways').to.equal(visible);
    } finally {
      scrollbar.remove();
      await setViewport({ width: 800, height: 600 });
    }
  });

  it('is modal below the narrow breakpoint: Tab stays in the panel, Escape closes it', async function () {
    await viewport(this, 320, 640);
    try {
      const { page, h } = await host(launcher(), 'default');
      page.querySelector('main')!.insertAdjacentHTML('afterbegin', '<button id="behind">A page button</button>');
      const behind = page.querySelector<HTMLButtonElement>('#behind')!;
      h.root.querySelector<HTMLButtonElement>('[part="launcher"]')!.click();
      await waitUntil(() => h.root.querySelector('dialog:modal'), 'the panel is modal');
      await waitUntil(() => h.root.activeElement === h.input, 'the focus is in the message box');
      for (let i = 0; i < 12; i++) {
        await sendKeys({ press: 'Tab' });
        expect(document.activeElement, `Tab ${i + 1} stays off the page behind`).not.to.equal(behind);
      }
      h.input.focus();
      await sendKeys({ press: 'Escape' });
      await waitUntil(() => !h.el.open, 'Escape closes it');
      await waitUntil(() => h.root.activeElement?.getAttribute('part') === 'launcher', 'the focus is on the launcher');
      await setViewport({ width: 800, height: 600 });
      // Media queries follow the new size at the next frame, Firefox's maybe later than the size itself.
      await waitUntil(() => !matchMedia('(max-width: 480px)').matches, 'the viewport is wide');
      await h.el.show();
      expect(h.root.querySelector('dialog')!.matches(':modal'), 'wide, it is not modal').to.equal(false);
    } finally {
      // Tabbing can leave the page for the browser's own controls; it tabs back, or later keys would go nowhere.
      for (let i = 0; i < 20 && !document.hasFocus(); i++) await sendKeys({ press: 'Tab' });
      await setViewport({ width: 800, height: 600 });
    }
  });
});
