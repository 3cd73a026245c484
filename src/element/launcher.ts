/**
 * @module
 * What a page loads first (`persona-chat.js`): it draws the launcher of each `<persona-chat>` and loads the chat
 * beside it (Lit, the lexer, the controller: a file of its own, found from this file's URL, so a CDN copy and a strict
 * CSP keep working) when the visitor shows intent (a pointer over it, the focus, a press), when the browser is
 * idle, or at once where the chat must show or work now: inline mode, `open`, or a message that a reload
 * interrupted and that is to be sent again. Written without Lit, so a page pays for the chat only when it is used.
 *
 * The element is defined only when the chat is loaded: until then it is an undefined element whose shadow root
 * holds the launcher, and the chat takes that root over. Safe to load twice, and beside the classic-script build.
 */
import { languageOf, localeOf } from './language.js';
import { chatIconPath, launcherCss } from './launcher.styles.js';
import { openLabels } from './locales/open.js';

const tag = 'persona-chat';
const mark = Symbol.for('persona-chat.launcher');

interface Chat extends HTMLElement {
  updateComplete: Promise<boolean>;
  show(): Promise<void>;
}

let chat: Promise<void> | undefined;
/** Loads the chat, once, and defines the element with it, which takes each launcher over. */
const load = () =>
  (chat ??= import('./define.js').then(({ PersonaChat }) => {
    if (!customElements.get(tag)) customElements.define(tag, PersonaChat);
  }));

/** Whether this tab holds a message a reload interrupted before the backend accepted it. */
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
  return openLabels[languageOf(localeOf(el))]!;
}

let sheet: CSSStyleSheet | undefined;

function draw(el: Element) {
  if (customElements.get(tag) || el.shadowRoot) return;
  if (el.getAttribute('mode') === 'inline' || el.hasAttribute('open') || interrupted()) return void load();
  const root = el.attachShadow({ mode: 'open' });
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(launcherCss);
  }
  root.adoptedStyleSheets = [sheet];
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
    void load()
      .then(() => (el as Chat).updateComplete)
      .then(() => (el as Chat).show());
  });
  for (const intent of ['pointerenter', 'focusin', 'touchstart']) {
    el.addEventListener(intent, load, { once: true, passive: true });
  }
  root.append(button);
  if ('requestIdleCallback' in window) requestIdleCallback(load);
  else setTimeout(load, 200);
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
  const added = new MutationObserver(records => records.forEach(record => record.addedNodes.forEach(drawIn)));
  added.observe(document.documentElement, { childList: true, subtree: true });
  void customElements.whenDefined(tag).then(() => added.disconnect());
}
