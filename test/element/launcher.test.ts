// The launcher script: what a page loads first draws the launcher without the chat, and the chat takes over on the
// visitor's intent, at once where it must, or when the browser is idle. Each page is a frame of its own (a fresh
// custom-element registry), against the real backend. The browser's idleness cannot be produced on demand, so each
// frame's requestIdleCallback is replaced by a list the test runs when it chooses.
import { expect, waitUntil } from '@open-wc/testing';
import { openLabels } from '../../src/element/locales/open.js';
import { loadTable } from '../../src/element/locale.js';
import { languages } from '../../src/element/language.js';
import { en } from '../../src/element/strings.js';
import { juniper, resetAll } from './harness.js';

type Frame = Window & typeof globalThis & { idle: (() => void)[] };
interface Chat extends HTMLElement {
  open: boolean;
  updateComplete: Promise<boolean>;
}

/** A page holding `body`, which loads the launcher script the way a site does. */
async function page(body: string, before = ''): Promise<Frame> {
  const frame = document.createElement('iframe');
  frame.style.cssText = 'width:800px;height:600px';
  frame.srcdoc =
    `<!doctype html><html lang="en"><head><script>window.idle=[];window.requestIdleCallback=f=>idle.push(f);${before}</script>` +
    `<script type="module" src="/src/element/launcher.ts"></script></head><body>${body}</body></html>`;
  const loaded = new Promise(resolve => frame.addEventListener('load', resolve, { once: true }));
  document.body.append(frame);
  await loaded;
  return frame.contentWindow as Frame;
}

/** Whether the chat's code was asked for: the element's own module. */
const chatLoaded = (w: Frame) =>
  w.performance.getEntriesByType('resource').some(entry => entry.name.includes('/src/element/persona-chat.ts'));

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
    await waitUntil(() => a.open, 'the press opens the panel');
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

  it('loads the chat when the browser is idle', async () => {
    const w = await page(`<persona-chat endpoint="/persona-chat" persona-id="${juniper}"></persona-chat>`);
    expect(w.idle.length).to.be.greaterThan(0);
    expect(chatLoaded(w)).to.equal(false);
    w.idle.forEach(work => work());
    await w.customElements.whenDefined('persona-chat');
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
      const w = await page(body!, before);
      await w.customElements.whenDefined('persona-chat');
      expect(w.idle, 'without waiting for idleness').to.deep.equal([]);
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

  it('has the launcher’s label of every language’s table', async () => {
    for (const language of languages) {
      const table = language === 'en' ? en : await loadTable(language);
      expect(openLabels[language], language).to.equal(table!.open);
    }
  });
});
