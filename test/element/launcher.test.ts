// The launcher script: what a page loads first draws the launcher without the chat, and the chat takes over on the
// visitor's intent, at once where it must, or, where the site asks for it, at once or when the browser is idle. Each
// page is a frame of its own (a fresh custom-element registry), against the real backend. The browser's idleness
// cannot be produced on demand, so each frame's requestIdleCallback is replaced by a list the test runs when it
// chooses.
import { expect } from '@open-wc/testing';
import { resetMouse, sendMouse } from '@web/test-runner-commands';
import { waitUntil } from './wait.js';
import { launcherTexts } from '../../src/element/locales/open.js';
import { loadTable } from '../../src/element/locale.js';
import { languages } from '../../src/element/locale.js';
import { en } from '../../src/element/strings.js';
import { juniper, resetAll } from './harness.js';

type Frame = Window & typeof globalThis & { idle: (() => void)[] };
interface Chat extends HTMLElement {
  open: boolean;
  updateComplete: Promise<boolean>;
}

/** A page holding `body`, which loads the launcher script (`src`, its source unless said) the way a site does. */
async function page(body: string, before = '', src = '/src/element/launcher.ts'): Promise<Frame> {
  const frame = document.createElement('iframe');
  frame.style.cssText = 'width:800px;height:600px';
  frame.srcdoc =
    `<!doctype html><html lang="en"><head><script>window.idle=[];window.requestIdleCallback=f=>idle.push(f);${before}</script>` +
    `<script type="module" src="${src}"></script></head><body>${body}</body></html>`;
  const loaded = new Promise(resolve => frame.addEventListener('load', resolve, { once: true }));
  document.body.append(frame);
  await loaded;
  return frame.contentWindow as Frame;
}

/** Whether the chat's code was asked for: the module that defines the element, or the element's own. */
const chatLoaded = (w: Frame) =>
  w.performance
    .getEntriesByType('resource')
    .some(entry => /\/src\/element\/(define|persona-chat)\.ts/.test(entry.name));

const chat = (w: Frame, selector = 'persona-chat') => w.document.querySelector(selector) as Chat;

describe('the launcher script', () => {
  beforeEach(resetAll);
  afterEach(() => document.querySelectorAll('iframe').forEach(frame => frame.remove()));

  it('draws the launcher in the page’s language without loading the chat, which a press loads and opens', async () => {
    const w = await page(
      `<persona-chat id="a" endpoint="/persona-chat" persona-id="${juniper}" lang="de"></persona-chat>` +
        `<div lang="ja"><persona-chat id="b" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat></div>` +
        `<persona-chat id="c" strings='{"open": "Ask us"}' endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
    );
    const launcher = (id: string) =>
      chat(w, `#${id}`).shadowRoot!.querySelector<HTMLButtonElement>('[part="launcher"]')!;
    expect(launcher('a').getAttribute('aria-label')).to.equal('Chat öffnen');
    expect(launcher('b').getAttribute('aria-label')).to.equal('チャットを開く');
    expect(launcher('c').getAttribute('aria-label')).to.equal('Ask us');
    expect(launcher('a').getBoundingClientRect().width, 'the launcher is drawn with its styles').to.equal(56);
    expect(w.customElements.get('persona-chat'), 'not defined yet').to.equal(undefined);
    expect(chatLoaded(w), 'the chat is not loaded').to.equal(false);

    const root = chat(w, '#a').shadowRoot;
    launcher('a').click();
    await w.customElements.whenDefined('persona-chat');
    const a = chat(w, '#a');
    await waitUntil(() => a.open, 'the press opens the panel', { timeout: 5000 });
    await a.updateComplete;
    expect(a.shadowRoot, 'the chat took the launcher’s root over').to.equal(root);
    expect(a.shadowRoot!.querySelectorAll('[part="launcher"]')).to.have.length(1);
    expect(a.shadowRoot!.activeElement?.tagName).to.equal('TEXTAREA');
    await waitUntil(
      () =>
        launcher('b').getAttribute('aria-label') === 'チャットを開く' &&
        chat(w, '#b').shadowRoot!.querySelector('[part="panel"]'),
    );
  });

  it('loads the chat on a pointer over the launcher, and keeps a keyboard user’s focus on it', async () => {
    const w = await page(`<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    const el = chat(w);
    el.dispatchEvent(new PointerEvent('pointerenter'));
    await w.customElements.whenDefined('persona-chat');
    expect(chatLoaded(w)).to.equal(true);

    const w2 = await page(`<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    const el2 = chat(w2);
    const button = el2.shadowRoot!.querySelector<HTMLButtonElement>('[part="launcher"]')!;
    button.focus();
    // A test page the browser runs in the background gets no focus events (its active element does change): the
    // one a visitor's tabbing would fire is dispatched here.
    button.dispatchEvent(new FocusEvent('focusin', { bubbles: true, composed: true }));
    await w2.customElements.whenDefined('persona-chat');
    await el2.updateComplete;
    expect(el2.shadowRoot!.activeElement?.getAttribute('part'), 'the chat’s launcher has the focus').to.equal(
      'launcher',
    );
    expect(el2.open).to.equal(false);
  });

  it('opens on a press that began on its launcher before the chat came and ended on the chat’s', async () => {
    // The chat's arrival between the two halves of a press is held for the test: the frame's registry defines the
    // element only when the test lets it, and a real mouse presses.
    const w = (await page(
      `<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
      'const define=customElements.define.bind(customElements);' +
        'customElements.define=(...a)=>a[0]==="persona-chat"?window.arrive=()=>define(...a):define(...a);',
    )) as Frame & { arrive?: () => void };
    const el = chat(w);
    let closed = 0;
    el.addEventListener('persona-chat-close', () => closed++);
    // The frame is made short enough to lie within every engine's viewport (WebKit's is 562 px high): a mouse
    // reaches only what the viewport shows.
    const frame = document.querySelector('iframe')!;
    frame.style.height = '300px';
    const { x, y } = frame.getBoundingClientRect();
    const box = el.shadowRoot!.querySelector('[part="launcher"]')!.getBoundingClientRect();
    const at: [number, number] = [Math.round(x + box.x + box.width / 2), Math.round(y + box.y + box.height / 2)];
    await sendMouse({ type: 'move', position: at });
    await waitUntil(() => w.arrive, 'the pointer over the launcher loads the chat', { timeout: 5000 });
    try {
      await sendMouse({ type: 'down' });
      w.arrive!();
      expect(w.customElements.get('persona-chat'), 'the chat took the launcher over').to.not.equal(undefined);
      await (el as Chat).updateComplete;
      await sendMouse({ type: 'up' });
    } finally {
      await resetMouse();
    }
    await waitUntil(() => el.open, 'the press opens the panel', { timeout: 5000 });
    await el.updateComplete;
    expect(el.shadowRoot!.activeElement?.tagName).to.equal('TEXTAREA');
    // The browser's own click, where it fires (before the press's end was answered), did not close it again.
    expect(closed, 'closed meanwhile').to.equal(0);
  });

  it('does not load the chat because the browser is idle, unless the site asks for it with loading="idle"', async () => {
    const w = await page(`<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    w.idle.splice(0).forEach(work => work());
    // What the idle work asked for would be on its way before this request, which goes to the same server.
    await w.fetch('/src/element/launcher.ts?after-idle');
    expect(chatLoaded(w), 'the browser idle, the chat is not asked for').to.equal(false);
    expect(w.idle).to.deep.equal([]);

    const idle = await page(
      `<persona-chat loading="idle" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
    );
    expect(chatLoaded(idle)).to.equal(false);
    idle.idle.forEach(work => work());
    await idle.customElements.whenDefined('persona-chat');
    expect(chat(idle).open, 'loaded, not opened').to.equal(false);
  });

  it('loads the chat when the browser is idle where the page shows no element, one inside a shadow root', async () => {
    const w = await page(
      '<div id="host"></div>',
      `addEventListener('DOMContentLoaded', () => document.getElementById('host').attachShadow({ mode: 'open' })` +
        `.innerHTML = '<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>');`,
    );
    const inside = w.document.getElementById('host')!.shadowRoot!.querySelector('persona-chat') as Chat;
    expect(inside.shadowRoot, 'out of the launcher’s sight').to.equal(null);
    w.idle.splice(0).forEach(work => work());
    await w.customElements.whenDefined('persona-chat');
    await inside.updateComplete;
    expect(inside.shadowRoot!.querySelectorAll('[part="launcher"]'), 'the chat draws its launcher').to.have.length(1);
  });

  it('loads the chat at once with loading="eager", keeping the launcher closed', async () => {
    const w = await page(
      `<persona-chat loading="eager" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
    );
    await w.customElements.whenDefined('persona-chat');
    await chat(w).updateComplete;
    expect(chat(w).open).to.equal(false);
    expect(chat(w).shadowRoot!.querySelectorAll('[part="launcher"]')).to.have.length(1);
  });

  it('loads the chat when a script opens the element or asks for it early, before any intent', async () => {
    const w = await page(`<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    chat(w).setAttribute('open', '');
    await w.customElements.whenDefined('persona-chat');
    await waitUntil(() => chat(w).open && chat(w).shadowRoot!.querySelector('[part="panel"]'), 'opened');

    const early = await page(`<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    expect(chatLoaded(early)).to.equal(false);
    chat(early).setAttribute('loading', 'eager');
    await early.customElements.whenDefined('persona-chat');
    expect(chat(early).open).to.equal(false);
  });

  it('loads the chat at once inline, open, or when a reload interrupted a message', async () => {
    for (const [body, before] of [
      [`<persona-chat mode="inline" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`, ''],
      [`<persona-chat open endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`, ''],
      [
        `<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
        `sessionStorage.setItem('persona-chat:elsewhere:pending', '[]');`,
      ],
    ]) {
      // The frame's idle callbacks never run.
      const w = await page(body!, before);
      await w.customElements.whenDefined('persona-chat');
    }
    sessionStorage.clear();
  });

  it('draws the launcher of an element added later, and does nothing the second time it is loaded', async () => {
    const w = await page('', '');
    const added = w.document.createElement('persona-chat');
    w.document.body.append(added);
    await waitUntil(() => added.shadowRoot?.querySelector('[part="launcher"]'), 'drawn');
    const script = w.document.createElement('script');
    script.type = 'module';
    script.src = '/src/element/launcher.ts?again';
    const ran = new Promise(resolve => script.addEventListener('load', resolve, { once: true }));
    w.document.head.append(script);
    await ran;
    expect(added.shadowRoot!.querySelectorAll('[part="launcher"]')).to.have.length(1);
  });

  it('has the launcher’s label of every language’s table, and its words in every language and no other', async () => {
    expect(Object.keys(launcherTexts).sort()).to.deep.equal([...languages].sort());
    for (const language of languages) {
      const table = language === 'en' ? en : await loadTable(language);
      expect(launcherTexts[language]![0], language).to.equal(table!.open);
      expect(launcherTexts[language]![1], language).to.be.a('string').and.not.equal('');
    }
  });
});

/**
 * The launcher as built, served as sites serve it, rightly or not (web-test-runner.config.mjs, `/built/<site>/`): the
 * whole folder, the launcher copied alone, a launcher of an earlier build after a redeploy, and a server that fails
 * the first request for the chat.
 */
describe('the launcher script as built', () => {
  beforeEach(resetAll);
  afterEach(() => document.querySelectorAll('iframe').forEach(frame => frame.remove()));

  /** What the test server was asked for, of a site's files: each file's name and query. */
  const requests = async (site: string): Promise<string[]> =>
    (await fetch(`/test-support/built-requests?site=${site}`)).json();
  /** The launcher of `el`, as the launcher script or the chat drew it. */
  const button = (el: Element) => el.shadowRoot!.querySelector<HTMLButtonElement>('[part="launcher"]')!;
  /** A page whose console errors are kept in `errors`, loading the launcher of `site`. */
  const builtPage = (site: string, body: string) =>
    page(
      body,
      'window.errors=[];console.error=(...a)=>errors.push(a.map(String).join(" "));',
      `/built/${site}/persona-chat.js`,
    );

  it('loads the chat from beside itself when the whole folder is served, and opens it on a press', async () => {
    const site = `whole-${Math.random().toString(36).slice(2)}`;
    const w = await builtPage(site, `<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    const el = chat(w);
    button(el).click();
    await waitUntil(() => el.open, 'the press opens the panel');
    const files = await requests(site);
    expect(
      files.filter(file => file.startsWith('persona-chat-define-')),
      'the chat, asked once',
    ).to.have.length(1);
    expect(
      files.some(file => file.startsWith('persona-chat-manifest.js')),
      'the manifest is not needed',
    ).to.equal(false);
  });

  it('says where the panel would be that the chat cannot be loaded when the launcher was copied alone', async function () {
    this.timeout(30_000);
    const w = (await builtPage(
      'launcher-only',
      `<persona-chat id="shop" endpoint="/persona-chat" persona-id="${juniper}" lang="de"></persona-chat>` +
        `<persona-chat id="help" mode="inline" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
    )) as Frame & { errors: string[] };
    const shop = chat(w, '#shop');
    const help = chat(w, '#help');
    button(shop).click();
    expect(button(shop).getAttribute('aria-busy'), 'busy while it tries').to.equal('true');
    const notice = (el: Element) => el.shadowRoot?.querySelector<HTMLElement>('[role="alert"]');
    await waitUntil(() => notice(shop) && notice(help), 'both say so, once the tries are over', { timeout: 15_000 });
    expect([notice(shop)!.lang, notice(shop)!.textContent]).to.deep.equal(['de', launcherTexts.de![1]]);
    expect([notice(help)!.lang, notice(help)!.textContent]).to.deep.equal(['en', launcherTexts.en![1]]);
    expect(button(shop).hasAttribute('aria-busy'), 'no longer busy').to.equal(false);
    for (const el of [shop, help]) {
      const box = notice(el)!.getBoundingClientRect();
      expect(box.width > 0 && box.height > 0 && box.top >= 0 && box.bottom <= w.innerHeight, el.id).to.equal(true);
    }
    expect(w.customElements.get('persona-chat')).to.equal(undefined);

    // The console is told once where the chat was looked for, and what to do.
    expect(w.errors).to.have.length(1);
    expect(w.errors[0]).to.match(/\/built\/launcher-only\/persona-chat-define-[\w-]+\.js\?try=\d/);
    expect(w.errors[0]).to.contain('serve the whole folder');

    // Each try asked afresh: the chat four times (the first, then after each pause), the manifest before each retry.
    const tried = await requests('launcher-only');
    const chats = tried.filter(file => file.startsWith('persona-chat-define-'));
    expect(chats).to.have.length(4);
    expect(new Set(chats).size, 'each under a URL of its own').to.equal(4);
    expect(tried.filter(file => file.startsWith('persona-chat-manifest.js'))).to.have.length(3);

    // The visitor's next press tries again at once, and says so again at once; the console is not told twice.
    button(shop).click();
    expect(button(shop).getAttribute('aria-busy')).to.equal('true');
    await waitUntil(() => !button(shop).hasAttribute('aria-busy'), 'the try failed, and was said');
    const again = (await requests('launcher-only')).slice(tried.length);
    expect(
      again.filter(file => file.startsWith('persona-chat-define-')),
      'one try more',
    ).to.have.length(1);
    expect(w.errors).to.have.length(1);
  });

  it('draws the launcher of a tab whose message a reload interrupted, and says there when the chat cannot load', async function () {
    this.timeout(30_000);
    const w = await page(
      `<persona-chat endpoint="/persona-chat" persona-id="${juniper}" lang="ar"></persona-chat>`,
      "sessionStorage.setItem('persona-chat:elsewhere:pending', '[]');console.error=()=>{};",
      '/built/launcher-only/persona-chat.js',
    );
    sessionStorage.clear();
    const el = chat(w);
    expect(button(el), 'the launcher, while the chat is asked for at once').not.to.equal(null);
    // The frame's idle callbacks never run: the tries are made at once.
    const notice = () => el.shadowRoot!.querySelector<HTMLElement>('[role="alert"]');
    await waitUntil(notice, 'it says so, once the tries are over', { timeout: 15_000 });
    expect([notice()!.lang, notice()!.dir, notice()!.textContent]).to.deep.equal(['ar', 'rtl', launcherTexts.ar![1]]);
  });

  it('opens the pressed launchers still on the page when the chat comes, leaving out one removed meanwhile', async () => {
    // A site of its own: the browser may keep the chat another test's page loaded.
    const site = `whole-${Math.random().toString(36).slice(2)}`;
    const w = (await builtPage(
      site,
      `<persona-chat id="a" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>` +
        `<persona-chat id="b" endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
    )) as Frame & { errors: string[] };
    const a = chat(w, '#a');
    const b = chat(w, '#b');
    button(a).click();
    a.remove();
    button(b).click();
    await waitUntil(() => b.open, 'b opens', { timeout: 10_000 });
    const files = (await requests(site)).filter(file => file.startsWith('persona-chat-define-'));
    expect(files, 'the chat, asked once').to.have.length(1);
    expect(b.shadowRoot!.querySelector('[role="alert"]')).to.equal(null);
    expect(w.errors).to.deep.equal([]);
  });

  for (const [kind, what] of [
    ['flaky', 'whose first request failed'],
    ['stalled', 'whose first request has no answer (given up after 5 s)'],
  ] as const) {
    it(`asks again for a chat ${what}, and opens it`, async function () {
      this.timeout(30_000);
      const site = `${kind}-${Math.random().toString(36).slice(2)}`;
      const w = (await builtPage(
        site,
        `<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
      )) as Frame & { errors: string[] };
      const el = chat(w);
      button(el).click();
      await waitUntil(() => el.open, 'the press opens the panel once the chat is there', { timeout: 15_000 });
      const files = (await requests(site)).filter(file => file !== 'persona-chat.js');
      expect(files.map(file => file.replace(/define-[\w-]+/, 'define-*'))).to.deep.equal([
        'persona-chat-define-*.js',
        'persona-chat-manifest.js?try=1',
        'persona-chat-define-*.js?try=1',
      ]);
      expect(w.errors).to.deep.equal([]);
    });
  }

  it('finds the chat deployed now when it is a launcher of an earlier build, and the chat works', async () => {
    const w = await builtPage(
      'older',
      `<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`,
    );
    const el = chat(w) as Chat & { send(text: string): Promise<{ content: string }> };
    button(el).click();
    await waitUntil(() => el.open, 'the press opens the panel', { timeout: 10_000 });
    const files = (await requests('older')).filter(file => file !== 'persona-chat.js');
    expect(files[0], 'the chat it was built with, which is gone').to.equal('persona-chat-define-0lderB1d.js');
    expect(files[1]).to.equal('persona-chat-manifest.js?try=1');
    expect(files[2]).to.match(/^persona-chat-define-[\w-]+\.js\?try=1$/);
    const reply = await el.send('How long does shipping take?');
    expect(reply.content).to.contain('business days');
  });
});
