// The element speaks the page's language: the table of the element's `lang` (or its nearest ancestor's, or the
// document's) is loaded, right-to-left languages mirror the panel, and a finished reply is read out as drawn.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import type { PersonaChat } from '../../src/element/persona-chat.js';
import { loadTable } from '../../src/element/locale.js';
import { en } from '../../src/element/strings.js';
import { Harness, juniper, oneEvent, resetAll } from './harness.js';

/** The panel once it shows the strings of `language` (its `lang` says which strings it shows). */
async function inLanguage(h: Harness, language: string) {
  // The table is a chunk of its own, which a loaded machine can take a few seconds to serve.
  await waitUntil(() => h.root.querySelector(`[part="panel"][lang="${language}"]`), `the panel in ${language}`, {
    timeout: 8000,
  });
  await h.el.updateComplete;
  return h.root.querySelector<HTMLElement>('[part="panel"]')!;
}

/** Every text a visitor can see or hear in the panel: text, labels, titles and the placeholder. */
function shownTexts(h: Harness): string[] {
  const root = h.root;
  const texts: string[] = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent?.trim();
    if (text && !node.parentElement?.closest('style')) texts.push(text);
  }
  for (const el of root.querySelectorAll('[aria-label], [title], [placeholder]')) {
    for (const name of ['aria-label', 'title', 'placeholder']) {
      const value = el.getAttribute(name);
      if (value) texts.push(value);
    }
  }
  return texts;
}

/** The English strings that show though the language writes them otherwise. */
async function englishShown(h: Harness, language: string) {
  const table = (await loadTable(language)) as Record<string, unknown>;
  const shown = new Set(shownTexts(h));
  return Object.entries(en)
    .filter(([key, value]) => typeof value === 'string' && value && table[key] !== value && shown.has(value))
    .map(([key]) => key);
}

const element = (template: ReturnType<typeof html>) =>
  fixture<HTMLElement>(template).then(
    host => new Harness(host.matches('persona-chat') ? (host as PersonaChat) : host.querySelector('persona-chat')!),
  );

describe('<persona-chat> in the visitor’s language', () => {
  beforeEach(resetAll);

  it('speaks German with lang="de": no English string shows', async () => {
    const h = await element(
      html`<persona-chat lang="de" endpoint="/persona-chat" mode="inline" storage="none" persona-id=${juniper}></persona-chat>`,
    );
    const panel = await inLanguage(h, 'de');
    expect(panel.getAttribute('dir')).to.equal('ltr');
    expect(h.input.placeholder).to.equal('Nachricht eingeben…');
    expect(h.sendButton.textContent!.trim()).to.equal('Senden');
    expect(await englishShown(h, 'de')).to.deep.equal([]);
  });

  it('takes the nearest ancestor’s lang, and mirrors the panel for Arabic', async () => {
    const h = await element(
      html`<div lang="ar">
        <persona-chat endpoint="/persona-chat" mode="inline" storage="none" persona-id=${juniper}></persona-chat>
      </div>`,
    );
    const panel = await inLanguage(h, 'ar');
    expect(panel.getAttribute('dir')).to.equal('rtl');
    expect(getComputedStyle(h.input).direction).to.equal('rtl');
    expect(h.sendButton.textContent!.trim()).to.equal('إرسال');
    expect(await englishShown(h, 'ar')).to.deep.equal([]);
  });

  it('follows the page when it changes its language, on an ancestor or on the document', async () => {
    const before = document.documentElement.lang;
    try {
      const h = await element(
        html`<div><persona-chat endpoint="/persona-chat" mode="inline" storage="none" persona-id=${juniper}></persona-chat></div>`,
      );
      document.documentElement.lang = 'fr';
      await inLanguage(h, 'fr');
      expect(h.sendButton.textContent!.trim()).to.equal('Envoyer');
      h.el.parentElement!.lang = 'he';
      const panel = await inLanguage(h, 'he');
      expect(panel.getAttribute('dir')).to.equal('rtl');
      h.el.parentElement!.removeAttribute('lang');
      await inLanguage(h, 'fr');
    } finally {
      document.documentElement.lang = before;
    }
  });

  it('follows a change of lang, and a host’s strings given as JSON in HTML', async () => {
    const h = await element(
      html`<persona-chat
        lang="ja"
        strings='{"send": "送る", "charactersLeft": "あと{n}文字"}'
        endpoint="/persona-chat"
        mode="inline"
        storage="none"
        persona-id=${juniper}
      ></persona-chat>`,
    );
    await inLanguage(h, 'ja');
    expect(h.sendButton.textContent!.trim()).to.equal('送る');
    expect(h.input.placeholder).to.equal('メッセージを入力…');
    h.el.setAttribute('lang', 'en-GB');
    await inLanguage(h, 'en');
    expect(h.input.placeholder).to.equal(en.placeholder);
    expect(h.sendButton.textContent!.trim()).to.equal('送る', 'the host’s strings stay on top');
  });

  it('reads a finished reply out as drawn, after who wrote it, and forgets it with a new conversation', async () => {
    const h = await element(
      html`<persona-chat
        heading="Juniper"
        endpoint="/persona-chat"
        mode="inline"
        storage="none"
        persona-id=${juniper}
      ></persona-chat>`,
    );
    const live = () => h.root.querySelector('[aria-live="polite"]')!.textContent!.trim();
    const replied = oneEvent(h.el, 'persona-chat-message');
    void h.el.send('How long does shipping take?').catch(() => {});
    const { content } = await replied;
    expect(content).to.match(/\*\*|\[\d\]/, 'the reply has markdown and footnote markers');
    await waitUntil(() => live().startsWith('Juniper said:'), 'the reply is announced');
    const drawn = h.lastReply()!.querySelector('.markdown')!.cloneNode(true) as Element;
    drawn.querySelectorAll('sup.cite').forEach(node => node.remove());
    expect(live()).to.equal(`Juniper said: ${drawn.textContent!.replace(/\s+/g, ' ').trim()}`);
    expect(live()).not.to.match(/\*\*|\[\d\]/);
    await h.el.newConversation();
    expect(live()).to.equal('');
  });
});
