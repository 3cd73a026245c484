/**
 * @module
 * How messages look: a message of the history, or a turn (the visitor's message and its reply), whose reply is
 * drawn from its status by one switch. Pure functions of the data and a few callbacks; the element owns the state.
 */
import { html, noChange, nothing, render } from 'lit';
import type { ElementPart } from 'lit';
import { Directive, directive } from 'lit/directive.js';
import type { Citation } from '../protocol.js';
import { MarkdownView, loadCloser } from './markdown.js';
import { defaultHeadingLevel, heading } from './render.js';
import { TurnStatus } from './state.js';
import type { Feedback, HistoryItem, Turn } from './state.js';
import { errorText } from './strings.js';
import type { Strings } from './strings.js';

export interface MessageActions {
  retry(): void;
  /** A vote on a reply (undefined takes it back), or the comment of its thumbs-down. */
  feedback(id: string, messageId: string | null, value: Feedback | undefined, comment?: string): void;
}

export interface RenderContext {
  strings: Strings;
  /** Who writes the replies: the persona's name, as the heading gives it. */
  speaker: string;
  actions: MessageActions;
  /**
   * The level of a reply's Sources heading and `#` headings, one below the panel's title (`heading-level`):
   * `defaultHeadingLevel` (3) unless given. A reply's markdown view takes it when the view is made.
   */
  headingLevel?: number;
  /** The locale numbers are written in. */
  locale: string;
  /** The reply whose thumbs-down asks for a comment, and the one thanked for it. */
  commenting: string | null;
  thanked: string | null;
  /** The browser is offline: a reply being written says it goes on once it is back. */
  offline?: boolean;
  /** The comment box shown under reply `commenting`, once its code is loaded. */
  form?: unknown;
}

/** A finished reply as drawn, and what it was drawn from. */
interface Drawn {
  from: unknown[];
  nodes: Element[];
}

/** What draws the messages: the element, which is asked to update when a reply drawn in pieces grows. */
type Owner = { requestUpdate?(): void; renderRoot?: unknown };

/**
 * Each element's replies: a markdown view while one is written (and once it is, in this page), else the reply as
 * drawn.
 */
const views = new WeakMap<Owner, Map<string, MarkdownView | Drawn>>();

/** Forgets the markdown views of an element's replies (a new conversation, or another one shown). */
export const forgetViews = (owner: Owner) => views.delete(owner);

/**
 * The end of a streamed reply is drawn in two tasks, neither of them long: its text and sources as it ended at once,
 * then its actions (and its announcement) in the next frame, before it is painted: one paint shows it whole. Per
 * view: whether they are drawn, once its end was.
 */
const ends = new WeakMap<MarkdownView, boolean>();
/** Per element, the frame that draws the rest of the end of its newest reply that ended, until it has. */
const ending = new WeakMap<Owner, Promise<void>>();

/** Resolves once the rest of the replies of `owner` that ended is drawn, and it updated; undefined when it is. */
export const endsDrawn = (owner: Owner) => ending.get(owner);

/** Where the end of the reply `key` is (see `ends`), for the guard of its turn, which draws again when it changes. */
export const endOf = (owner: Owner, key: string) => ends.get(views.get(owner)?.get(key) as MarkdownView);

/**
 * Whether the rest of the end of the reply streamed in `view` (its actions) is drawn now: not in the task that draws
 * the end of its text, but in the next frame's, which updates the element again.
 */
function restOfEnd(owner: Owner, view: MarkdownView): boolean {
  if (!ends.has(view)) {
    ends.set(view, false);
    // In the next frame, or a task a little later where there is none (a hidden tab).
    const later: Promise<void> = new Promise(resolve => {
      const draw = () => {
        if (ends.get(view)) return;
        ends.set(view, true);
        if (ending.get(owner) === later) ending.delete(owner);
        owner.requestUpdate?.();
        resolve();
      };
      requestAnimationFrame(draw);
      setTimeout(draw, 100);
    });
    ending.set(owner, later);
  }
  return ends.get(view)!;
}

/** One markdown view per reply and element, so streaming re-lexes only the tail; a new one if `fresh`. */
function viewFor(owner: Owner, key: string, { strings, headingLevel }: RenderContext, fresh?: boolean): MarkdownView {
  let map = views.get(owner);
  if (!map) views.set(owner, (map = new Map()));
  let view = map.get(key);
  if (fresh || !(view instanceof MarkdownView)) {
    view = new MarkdownView({
      copyLabel: strings.copy,
      codeLabel: strings.code,
      sourceLabel: strings.source,
      headingLevel,
      // Code is drawn highlighted once the highlighter has come: its styles join the element's, and the replies
      // that drew code with a language before it came are drawn again, no other.
      highlighted(chunk) {
        chunk.adopt(owner.renderRoot);
        map.delete(key);
        owner.requestUpdate?.();
      },
    });
    map.set(key, view);
  }
  return view;
}

/** An icon: a path in a 24 × 24 box, drawn with the text's colour, hidden from screen readers. */
export const icon = (path: string) =>
  html`<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" aria-hidden="true"><path d=${path} /></svg>`;

/** The icons of a reply's actions, in their order: copy, thumbs up, thumbs down. */
const actionIcons = [
  'M9 9h11v11H9zM5 15H4V4h11v1',
  'M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.3a2 2 0 0 0 2-1.7l1.4-9A2 2 0 0 0 19.7 9H14z',
  'M10 15v4a3 3 0 0 0 3 3l4-9V2H5.7a2 2 0 0 0-2 1.7l-1.4 9A2 2 0 0 0 4.3 15H10z',
];

/** Draws the icons into the buttons of a reply's actions (`bar`), once. */
function drawIcons(bar: Element | null | undefined) {
  const buttons = bar?.children;
  if (!buttons || buttons[0]?.firstChild) return;
  actionIcons.forEach((path, i) => buttons[i]!.append(...still(icon(path))));
}

/**
 * The icons of the actions whose element it is on, drawn when `shown` (and never taken away): Lit draws none of the
 * buttons' content, so a button keeps its identity, and the focus, when its icon comes.
 */
const icons = directive(
  class extends Directive {
    render(_shown: boolean) {
      return noChange;
    }
    override update(part: ElementPart, [shown]: [boolean]) {
      if (shown) drawIcons(part.element);
      return noChange;
    }
  },
);

/**
 * A finished message was hovered or took the focus: the icons of its actions are drawn, if they were not. A reply of
 * the history draws them only then (or when it has a vote or a comment, or is the newest): its buttons are there all
 * along, for the keyboard and screen readers, without them.
 */
export const reveal = (event: Event) =>
  drawIcons((event.target as Element).closest?.('.message')?.querySelector('.reply-actions'));

const percents = new Map<string, Intl.NumberFormat>();

/** `value` as a percentage in `locale` (or the browser's, if `locale` is not one); made on first use, as it is slow. */
function percent(locale: string, value: number) {
  let format = percents.get(locale);
  if (!format) {
    try {
      format = new Intl.NumberFormat(locale, { style: 'percent' });
    } catch {
      format = new Intl.NumberFormat(undefined, { style: 'percent' });
    }
    percents.set(locale, format);
  }
  return format.format(value);
}

/** A string field of untrusted data, or nothing. */
const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);

/** Where a source's link goes, for its text: the host of its address, "shop.example.com". */
function hostOf(url: string) {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** Shows a source's passages, or hides them (its disclosure button says which); `open` says which. */
export function toggleSource(button: Element, open = button.getAttribute('aria-expanded') !== 'true') {
  button.setAttribute('aria-expanded', String(open));
  button.closest('li')?.querySelector('.passages')?.toggleAttribute('hidden', !open);
}

const toggle = (event: Event) => toggleSource(event.currentTarget as Element);

/** Where a footnote leads: its source (`item`), with its passages shown, scrolled to, focused and highlighted. */
export function showSource(item: HTMLElement) {
  const button = item.querySelector('[aria-expanded]');
  if (button) toggleSource(button, true);
  item.scrollIntoView({ block: 'nearest' });
  const target = item.querySelector<HTMLElement>('button, a') ?? item;
  if (target === item) item.tabIndex = -1;
  target.focus({ preventScroll: true });
  item.classList.add('highlight');
  setTimeout(() => item.classList.remove('highlight'), 1500);
}

/**
 * The Sources of the reply `key`, cited ones first in footnote order. Each is its name, a disclosure button when it
 * has passages (which shows them), and apart from it, never inside, a link to the source when it has an http(s)
 * address.
 */
function sources(key: string, citations: Citation[], order: number[], context: RenderContext) {
  const { strings, locale } = context;
  // A set keeps each index where it first comes: the cited ones, then the others in their order.
  const list = [...new Set([...order.filter(index => citations[index]), ...citations.keys()])];
  if (!list.length) return nothing;
  return html`<div class="citations" part="citations">
    ${heading(context.headingLevel ?? defaultHeadingLevel, strings.sources)}
    <ol>
      ${list.map((index, n) => {
        const citation = citations[index]!;
        const name =
          text(citation.sourceName) ?? text(citation.documentId) ?? text(citation.sourceUrl) ?? strings.source(n + 1);
        const url = text(citation.sourceUrl)?.match(/^https?:\/\//i) ? citation.sourceUrl : undefined;
        const passages = Array.isArray(citation.partitions) ? citation.partitions : [];
        // Unique in the element's root: a reply's key (any text the service gave) and the source's index.
        const id = `passages-${key.replace(/[^\w-]/g, '_')}-${index}`;
        return html`<li id=${`source-${index}`} data-source=${index} value=${n + 1}>
          ${
            passages.length
              ? html`<button type="button" class="source-name" aria-expanded="false" aria-controls=${id} @click=${toggle}>${name}</button>`
              : html`<span class="source-name">${name}</span>`
          }
          ${
            url
              ? html`<a href=${url} target="_blank" rel="noopener noreferrer nofollow" data-source-link=${index}
                  >${hostOf(url)}</a
                >`
              : nothing
          }
          ${
            passages.length
              ? html`<div class="passages" id=${id} hidden>
                  ${passages.map(
                    p =>
                      html`<blockquote>
                        ${text(p?.text)}
                        ${
                          typeof p?.relevance === 'number'
                            ? html`<div class="relevance">${strings.relevance(percent(locale, p.relevance))}</div>`
                            : nothing
                        }
                      </blockquote>`,
                  )}
                </div>`
              : nothing
          }
        </li>`;
      })}
    </ol>
  </div>`;
}

/**
 * The reply's markdown, from its view (`viewFor()`); a text its renderer cannot draw shows as plain text, and the
 * panel goes on working. `citations`: how many sources the reply has, when known.
 */
function markdown(owner: Owner, key: string, text: string, final: boolean, context: RenderContext, citations?: number) {
  const view = viewFor(owner, key, context);
  view.setCitationCount(citations);
  try {
    return html`<div class="markdown">${view.render(text, final)}</div>`;
  } catch {
    return html`<div class="markdown plain">${text}</div>`;
  }
}

/**
 * A reply's actions: its copy button and its thumbs, each pressed while it is the vote given (pressed again, it takes
 * the vote back), and under them the comment sent with a thumbs-down, or the box asking for one. Their icons are drawn
 * when `shown`, or when the reply is first hovered or focused (see `reveal()`). As few nodes as can be (no space
 * between tags, no marker in a button), since the history has one per reply.
 */
function feedbackButtons(
  { id, messageId, feedback, comment }: Pick<Turn, 'id' | 'messageId' | 'feedback' | 'comment'>,
  context: RenderContext,
  shown = true,
) {
  const { strings, actions } = context;
  const vote = (value: Feedback) => () => actions.feedback(id, messageId, feedback === value ? undefined : value);
  const asking = context.commenting === id;
  // prettier-ignore
  return html`<div class="reply-actions" ${icons(shown || !!feedback || !!comment || asking)}><button type="button" class="icon-button" part="copy-reply-button" aria-label=${strings.copyReply} data-copy-reply></button><button type="button" class="icon-button" aria-label=${strings.helpful} aria-pressed=${feedback === 'up'} @click=${vote('up')}></button><button type="button" class="icon-button" aria-label=${strings.notHelpful} aria-pressed=${feedback === 'down'} @click=${vote('down')}></button>${context.thanked === id ? html`<span class="thanks" role="status">${strings.feedbackThanks}</span>` : nothing}</div>${
    comment || asking
      ? [comment ? html`<p class="given">${strings.yourComment} <q dir="auto">${comment}</q></p>` : nothing, asking ? context.form : nothing]
      : nothing
  }`;
}

/**
 * What no longer changes, drawn once as plain DOM: the elements `template` makes, without Lit's markers (about 80
 * comments in a reply of ordinary length). It is replaced when what it shows changes, never updated in place, so it
 * needs none; its listeners stay.
 */
function still(template: unknown): Element[] {
  const box = document.createElement('div');
  render(template, box);
  // Collected first, then removed: removing them as a NodeIterator walks costs many times as much.
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_COMMENT);
  const markers: ChildNode[] = [];
  while (walker.nextNode()) markers.push(walker.currentNode as Comment);
  for (const marker of markers) marker.remove();
  return [...box.children];
}

/**
 * The most text of a finished reply that one task draws, in characters: a long reply is drawn a piece at a time, each
 * piece in a task of its own, so that the page goes on responding. A piece is whole chunks of the text (see
 * `MarkdownView`), at least one, each at most three times 2 KB.
 */
const piece = 6_144;

/**
 * A finished reply's text and its sources, and whether what follows them (its actions) is drawn now.
 * - A reply written in this page goes on in the DOM it streamed into: its end costs what a frame of it did, however
 *   long it is, and its actions are drawn in the next frame (see `restOfEnd()`). Unless its end would cost more than
 *   a piece: its markers mean something else now that its sources are known, or much of it came while the page drew
 *   nothing (a hidden tab).
 * - Any other is drawn as plain DOM, and drawn again only when what it shows changes, not when the reply does
 *   otherwise (its thumbs): a source the visitor opened stays open. It is drawn a piece per task: each piece after
 *   those before it, busy until the last, then the sources; the DOM is then the one the whole reply drawn at once
 *   makes. The pieces stop when the reply is drawn anew or forgotten, and the element updates after each, to keep
 *   the list at its end if it was.
 */
function finished(
  owner: Owner,
  key: string,
  text: string,
  citations: Citation[],
  context: RenderContext,
  listed = true,
): [unknown, unknown, boolean] {
  const count = citations.length;
  const kept = views.get(owner)?.get(key);
  const listing = (view: MarkdownView) =>
    listed && count ? sources(key, citations, view.footnotes.order(), context) : nothing;
  // The element forgets its views when the strings or the heading level change.
  const from = [text, citations, listed, context.locale];
  if (kept instanceof MarkdownView) {
    if (!kept.setCitationCount(count) && text.length < kept.length + piece) {
      // Drawn by `kept`, the view `markdown()` finds.
      const drawn = markdown(owner, key, text, true, context, count);
      return [drawn, listing(kept), !listed || restOfEnd(owner, kept)];
    }
  } else if (kept && from.every((value, i) => value === kept.from[i])) return [kept.nodes, nothing, true];
  // A view of its own: the one it streamed in, if it did, would give every piece it has at once.
  const view = viewFor(owner, key, context, true);
  view.setCitationCount(count);
  const box = document.createElement('div');
  box.className = 'markdown';
  box.setAttribute('aria-busy', 'true');
  const drawn: Drawn = { from, nodes: [box] };
  // A view that renders a final text in pieces gives the parts of the pieces before too, in order.
  let shown = 0;
  const draw = () => {
    if (views.get(owner)?.get(key) !== drawn) return;
    try {
      const parts = view.render(text, true, piece);
      box.append(...still(parts.slice(shown)));
      shown = parts.length;
    } catch {
      // As `markdown()` shows a text its renderer cannot draw.
      box.className = 'markdown plain';
      box.replaceChildren(text);
      view.more = false;
    }
    if (view.more) {
      setTimeout(() => {
        draw();
        owner.requestUpdate?.();
      });
    } else {
      box.removeAttribute('aria-busy');
      const list = listing(view);
      if (list === nothing) return;
      const after = still(list);
      // After the first piece, the reply is in the document, and its sources go after its text there too.
      box.after(...after);
      drawn.nodes.push(...after);
    }
  };
  views.get(owner)!.set(key, drawn);
  draw();
  return [drawn.nodes, nothing, true];
}

/**
 * A reply, an article named by who wrote it. Its content is a list whose first item is its text from the start
 * (see `reply()`).
 */
const assistant = (busy: boolean, content: unknown, context: RenderContext, after: unknown = nothing) =>
  // prettier-ignore
  html`<div class="message assistant" part="message assistant-message" dir="auto" role="article" aria-label=${context.speaker} aria-busy=${busy}>${content}${after}</div>`;

/** A message of the visitor's, an article named "You": its text as the one node it holds. */
const user = (text: string, context: RenderContext, queued = false) =>
  html`<div class="message user ${queued ? 'queued' : ''}" part="message user-message" dir="auto" role="article" aria-label=${context.strings.you} .textContent=${text}></div>`;

/**
 * A message of the history, in few nodes: a conversation of hundreds has one each. A reply's actions show their icons
 * when `newest` (the newest reply of the history), or once it is hovered or focused (see `reveal()`).
 */
export function renderHistoryItem(owner: Owner, item: HistoryItem, context: RenderContext, newest = false) {
  let message;
  if (item.role === 'user') message = user(item.text, context);
  else {
    const [drawn] = finished(owner, item.id, item.text, item.citations, context);
    // One node without the two markers Lit puts around each of a list's.
    const nodes = Array.isArray(drawn) && drawn.length === 1 ? drawn[0] : drawn;
    message = assistant(false, nodes, context, item.messageId ? feedbackButtons(item, context, newest) : nothing);
  }
  return html`<div class="item" data-key=${item.id}>${message}</div>`;
}

/** A notice under a reply that did not end well, with Retry when it is the one to retry. */
function notice(text: string, canRetry: boolean, context: RenderContext) {
  return html`<div class="notice" part="error">
    <span>${text}</span>
    ${
      canRetry
        ? html`<button type="button" class="text-button" part="retry-button" @click=${context.actions.retry}>
            ${context.strings.retry}
          </button>`
        : nothing
    }
  </div>`;
}

/**
 * The reply of a turn, by its status. Its text is the first item of the content from the first delta to the end, so
 * that Lit updates the DOM it streamed into rather than drawing it again when it ends.
 */
function reply(owner: Owner, turn: Turn, canRetry: boolean, context: RenderContext) {
  const { strings } = context;
  const { id, reply: text, citations } = turn;
  /** A turn that ended: its text (when it has one, or is `listed`, with its sources), then `after`. */
  const ended = (after: unknown, listed = false) => {
    const [drawn, sources, rest] =
      text || listed ? finished(owner, id, text, citations, context, listed) : [nothing, nothing, true];
    return assistant(false, [drawn, sources], context, rest ? after : nothing);
  };
  switch (turn.status) {
    case TurnStatus.queued:
      return nothing;
    case TurnStatus.accepting:
    case TurnStatus.streaming: {
      loadCloser();
      // The first percentage format is slow to make (tens of ms): made while the reply is awaited, not in the task
      // that draws its sources' relevance.
      if (!text) percent(context.locale, 0);
      // Said in a reply whose connection is being made again, or waits for the browser to be online, in place of an
      // error; one status, whose words change with the connection.
      const waiting = context.offline || turn.reconnecting;
      const status = waiting
        ? html`<p class="reconnecting" role="status">${context.offline ? strings.offline : strings.reconnecting}</p>`
        : nothing;
      return assistant(
        true,
        text
          ? [markdown(owner, id, text, false, context, citations.length || undefined), status]
          : waiting
            ? status
            : html`<span class="typing" role="status" aria-label=${strings.typing}><span></span><span></span><span></span></span>`,
        context,
      );
    }
    case TurnStatus.done:
      return ended(turn.messageId ? feedbackButtons(turn, context) : nothing, true);
    case TurnStatus.stopped:
      return ended(notice(strings.stopped, canRetry, context));
    case TurnStatus.failed:
      // The one notice of the failure: what became of the message, and why.
      return ended(
        notice(
          (text ? strings.incomplete : strings.notAnswered) +
            (turn.error ? ` ${errorText(strings, turn.error.code)}` : ''),
          canRetry,
          context,
        ),
      );
    case TurnStatus.interrupted:
      return ended(notice(strings.interrupted, canRetry, context));
  }
}

export function renderTurn(owner: Owner, turn: Turn, canRetry: boolean, context: RenderContext) {
  const queued = turn.status === TurnStatus.queued;
  return html`<div class="item" data-key=${turn.id} data-status=${turn.status} ?data-reconnecting=${turn.reconnecting}>
    ${user(turn.text, context, queued)}
    ${reply(owner, turn, canRetry, context)}
  </div>`;
}
