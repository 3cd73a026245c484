/**
 * @module
 * What a page loads first (`persona-chat.js`): it draws the launcher of each `<persona-chat>` and loads the chat
 * beside it (Lit, the lexer, the controller: a file of its own, found from this file's URL, so a CDN copy and a strict
 * CSP keep working) when the visitor shows intent (a pointer over it, the focus, a touch, a press), or at once where
 * the chat must show or work now: inline mode, `open` (also when set later), or a message or its reply that a reload
 * interrupted, to be sent again or followed (its reply may be an unread one). A browser merely idle is not intent: a
 * page whose visitor never comes near the chat fetches this file alone. The `loading` attribute lets a site ask for
 * more: `idle` loads the chat when the browser is idle, `eager` at once. Written without Lit, so a page pays for the
 * chat only when it is used.
 *
 * The element is defined only when the chat is loaded: until then it is an undefined element whose shadow root
 * holds the launcher, and the chat takes that root over. Safe to load twice, and beside the classic-script build.
 *
 * A chat that does not load is asked for again, after a pause and at once on the visitor's next intent, and each
 * new try asks the manifest beside this file which chat is current: a launcher cached before a redeploy finds the
 * chat deployed now. When the tries keep failing, the elements the visitor waits on say so where the panel would be,
 * and the console says once where the chat was looked for.
 */
import { isRightToLeft, languageOf, localeOf } from './language.js';
import { chatIconPath, launcherCss, unavailableCss } from './launcher.styles.js';
import { launcherTexts } from './locales/open.js';

const tag = 'persona-chat';
const mark = Symbol.for('persona-chat.launcher');

interface Chat extends HTMLElement {
  updateComplete: Promise<boolean>;
  show(): Promise<void>;
}

/** The name of the chat's file beside this one, which carries its hash: the build sets it. */
declare const __PERSONA_CHAT_CHAT__: string | undefined;
/** The chat's file, beside this one; in the sources, its module. */
const chatFile = typeof __PERSONA_CHAT_CHAT__ === 'string' ? __PERSONA_CHAT_CHAT__ : './define.ts';
/** The module beside this file that names the chat of the build deployed now. */
const manifestFile = 'persona-chat-manifest.js';
/** The pauses before the first tries again; after them, a try waits for the visitor's intent. */
const pauses = [500, 1000, 2000];
/** How long a try may take before it counts as failed (the chat, if it comes later, is used all the same). */
const patience = 5000;

/** The try under way, or the chat loaded. */
let chat: Promise<void> | undefined;
/** The tries that failed: each later one asks for its files afresh, under URLs of their own. */
let failures = 0;
let retry: ReturnType<typeof setTimeout> | undefined;
/**
 * The elements that show the chat now (inline, or `open`) or whose launcher was pressed (true: they open once the
 * chat is there): told when it cannot be loaded.
 */
const waiting = new Map<Element, boolean>();

const beside = (file: string) => new URL(failures ? `${file}?try=${failures}` : file, import.meta.url).href;

/** Loads the chat, once (it defines the element, which takes each launcher over); never rejects. */
function load(): Promise<void> {
  clearTimeout(retry);
  let href = beside(chatFile);
  const trying = async () => {
    if (failures) {
      const manifest = import(/* @vite-ignore */ beside(manifestFile)) as Promise<{ default: string }>;
      href = beside(
        await manifest.then(
          current => current.default,
          () => chatFile,
        ),
      );
    }
    await Promise.race([
      import(/* @vite-ignore */ href),
      new Promise((_, reject) => setTimeout(reject, patience, new Error('no answer'))),
    ]);
  };
  return (chat ??= trying().then(
    () => {
      // An element removed before the chat came is not upgraded, and has nothing to open.
      waiting.forEach((pressed, el) => pressed && void (el as Chat).updateComplete?.then(() => (el as Chat).show()));
      waiting.clear();
    },
    (error: unknown) => {
      chat = undefined;
      if (++failures <= pauses.length) return void (retry = setTimeout(load, pauses[failures - 1]));
      // The pauses are over: the console is told once, and from now on a failed try is said at once.
      if (failures === pauses.length + 1) {
        console.error(`<persona-chat>: no chat at ${href}: serve the whole folder persona-chat.js is in.`, error);
      }
      waiting.forEach((_pressed, el) => (el.isConnected ? unavailable(el) : waiting.delete(el)));
    },
  ));
}

let sheet: CSSStyleSheet | undefined;

/** The launcher's styles, shared by every root the launcher script draws in. */
function styles() {
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(launcherCss + unavailableCss);
  }
  return [sheet];
}

/** Says, where the panel would be, that the chat cannot be loaded; the visitor's next intent tries again. */
function unavailable(el: Element) {
  // A try that took too long may have brought the chat since: it has the element.
  if (customElements.get(tag)) return;
  let root = el.shadowRoot;
  // An element with no launcher (inline, `open`) is listened to from now on; one with a launcher already is.
  if (!root) {
    listen(el);
    root = el.attachShadow({ mode: 'open' });
  }
  root.querySelector('.launcher')?.removeAttribute('aria-busy');
  if (root.querySelector('.unavailable')) return;
  root.adoptedStyleSheets = styles();
  const notice = document.createElement('div');
  notice.className = 'unavailable';
  notice.setAttribute('part', 'panel error');
  notice.setAttribute('role', 'alert');
  notice.lang = language(el);
  // The panel's direction: the element's `dir`, else its language's.
  if (!el.hasAttribute('dir')) notice.dir = isRightToLeft(notice.lang) ? 'rtl' : 'ltr';
  notice.textContent = launcherTexts[notice.lang]![1];
  root.append(notice);
}

/** Loads the chat when the visitor shows intent: a pointer over the element, the focus in it, a touch. */
function listen(el: Element) {
  for (const intent of ['pointerenter', 'focusin', 'touchstart']) el.addEventListener(intent, load, { passive: true });
}

/** The element's language, if the launcher has words in it. */
const language = (el: Element) => languageOf(localeOf(el), Object.keys(launcherTexts));

/** Whether this tab holds a message a reload interrupted, before the backend accepted it or before its reply ended. */
function interrupted() {
  try {
    return Object.keys(sessionStorage).some(key => key.startsWith('persona-chat:') && key.endsWith(':pending'));
  } catch {
    return false;
  }
}

/** The launcher's label: the host's `strings`, else the element's language. */
function label(el: Element) {
  try {
    const open = (JSON.parse(el.getAttribute('strings') ?? '{}') as { open?: unknown }).open;
    if (typeof open === 'string') return open;
  } catch {
    // Not JSON: the chat reports it once loaded.
  }
  return launcherTexts[language(el)]![0];
}

/** Runs `work` when the browser is idle, or soon where it cannot say. */
const idle = (work: () => unknown) => (window.requestIdleCallback ?? setTimeout)(work);

/** Whether the chat must show now: inline, or open. */
const showing = (el: Element) => el.getAttribute('mode') === 'inline' || el.hasAttribute('open');

/**
 * Loads the chat now where it must show or work now (the element then waits on it), or where the site asks for it
 * early (`loading="eager"`), or asks for it when the browser is idle (`loading="idle"`); else the visitor's intent
 * loads it. Run when the element is drawn and again when one of those attributes changes.
 */
function early(el: Element) {
  if (!waiting.has(el) && (showing(el) || interrupted())) waiting.set(el, false);
  const loading = el.getAttribute('loading');
  if (waiting.has(el) || loading === 'eager') void load();
  else if (loading === 'idle') idle(load);
}

function draw(el: Element) {
  if (customElements.get(tag) || el.shadowRoot) return;
  // Where the chat must show now, it is loaded at once, with no launcher.
  if (showing(el)) return early(el);
  const root = el.attachShadow({ mode: 'open' });
  root.adoptedStyleSheets = styles();
  const button = document.createElement('button');
  button.className = 'launcher';
  button.setAttribute('part', 'launcher');
  button.setAttribute('aria-label', label(el));
  button.setAttribute('aria-expanded', 'false');
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  for (const [name, value] of Object.entries({
    viewBox: '0 0 24 24',
    fill: 'none',
    stroke: 'currentColor',
    'stroke-width': '2',
    'aria-hidden': 'true',
  })) {
    svg.setAttribute(name, value);
  }
  path.setAttribute('d', chatIconPath);
  svg.append(path);
  button.append(svg);
  // A press opens the chat as soon as it is there; until then the launcher says it is busy.
  button.addEventListener('click', () => {
    button.setAttribute('aria-busy', 'true');
    waiting.set(el, true);
    void load();
  });
  listen(el);
  root.append(button);
  early(el);
}

/** Draws the launchers of the elements in `node`, the node included. */
function drawIn(node: Node) {
  if (!(node instanceof Element)) return;
  if (node.localName === tag) draw(node);
  node.querySelectorAll(tag).forEach(draw);
}

const page = window as unknown as Record<symbol, boolean>;
if (!customElements.get(tag) && !page[mark]) {
  page[mark] = true;
  drawIn(document.documentElement);
  // An element the launcher cannot see (inside another component's shadow root) has no launcher and tells no intent:
  // where the page shows none when the browser is idle, the chat is loaded then, which draws it.
  idle(() => document.querySelector(tag) || load());
  // Elements added later are drawn; an element told later to show, or to load early, loads the chat.
  const added = new MutationObserver(records =>
    records.forEach(record =>
      record.type === 'attributes'
        ? (record.target as Element).localName === tag && early(record.target as Element)
        : record.addedNodes.forEach(drawIn),
    ),
  );
  added.observe(document.documentElement, {
    childList: true,
    subtree: true,
    attributeFilter: ['mode', 'open', 'loading'],
  });
  void customElements.whenDefined(tag).then(() => added.disconnect());
}
