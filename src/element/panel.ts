/**
 * @module
 * The element's templates: the launcher, and the panel (inline, or a floating `<dialog>`) with its header, the
 * message list, the error notice and the composer. They draw a `PanelView`, which the element makes at each render;
 * the messages themselves are drawn by `messages.ts`, the history view by `history.ts`. Clicks in the message list
 * are handled in one place, `clickInMessages`.
 */
import { html, nothing } from 'lit';
import { guard } from 'lit/directives/guard.js';
import { messageMaxLength } from '../protocol.js';
import { chatIconPath } from './launcher.styles.js';
import { copy, copyCode } from './clipboard.js';
import { endOf, icon, renderHistoryItem, renderTurn, reveal, showSource } from './messages.js';
import type { RenderContext } from './messages.js';
import { heading, highlight } from './render.js';
import { activeTurn, timeline } from './state.js';
import type { ChatState, HistoryItem, Turn } from './state.js';
import type { Citation } from '../protocol.js';
import type { Strings } from './strings.js';

const chatIcon = icon(chatIconPath);
const closeIcon = icon('M6 6l12 12M18 6L6 18');
const historyIcon = icon('M4 6h16M4 12h16M4 18h10');
const newIcon = icon('M12 5v14M5 12h14');
const downloadIcon = icon('M12 4v11m-5-5 5 5 5-5M5 20h14');

/**
 * What the visitor can do in the panel beyond the element's public methods and the messages' own actions (the
 * context's); each takes its event.
 */
export interface PanelActions {
  toggleHistory(): void;
  newConversation(): void;
  download(): void;
  scrolled(): void;
  click(event: Event): void;
  submit(event: Event): void;
  input(event: Event): void;
  keydown(event: KeyboardEvent): void;
  sendOrStop(event: Event): void;
  jump(): void;
}

/** The element, by what the panel reads of its public properties and calls of its public methods. */
export interface PanelHost {
  open: boolean;
  subheading: string;
  greeting: string;
  starters: string[];
  noHistory: boolean;
  endpoint: string;
  toggle(): Promise<void>;
  hide(): Promise<void>;
  send(text: string): Promise<unknown>;
  requestUpdate(): void;
}

/** What else the panel shows, as the element has it at one render: its drawn state and what it derives. */
export interface PanelView {
  strings: Strings;
  context: RenderContext;
  state: ChatState;
  inline: boolean;
  /** Replies that finished while the panel was closed. */
  unread: number;
  language: string;
  /** The panel's direction, unless the element has a `dir` of its own. */
  dir: string | typeof nothing;
  /** The panel's heading level. */
  level: number;
  /** The history view, while it is shown. */
  history: unknown;
  draft: string;
  /** Whether the list follows the newest message. */
  pinned: boolean;
  /** The error notice, if any. */
  error: string;
  /** A turn is being answered or waits: the send button is Stop. */
  busy: boolean;
  /** The turn Retry applies to, if any. */
  retryable: Turn | undefined;
  on: PanelActions;
}

/** The launcher and the panel of `host`; its messages' views are kept under it (`messages.ts`). */
export function renderPanel(host: PanelHost, view: PanelView) {
  const { strings: t, inline } = view;
  const { open } = host;
  const content = renderContent(host, view);
  return html`
      ${
        inline
          ? nothing
          : html`<button
              class="launcher"
              part="launcher"
              aria-label=${open ? t.close : view.unread ? `${t.open}: ${t.unread(view.unread)}` : t.open}
              aria-expanded=${open}
              aria-controls="panel"
              @click=${() => host.toggle()}
            >
              ${open ? closeIcon : chatIcon}
              ${view.unread && !open ? html`<span class="badge" part="unread-badge" aria-hidden="true">${view.unread}</span>` : nothing}
            </button>`
      }
      <div class="sr-only live" aria-live="polite"></div>
      ${
        inline
          ? html`<section id="panel" class="panel inline" part="panel" lang=${view.language} dir=${view.dir} aria-label=${t.heading}>
              ${content}
            </section>`
          : html`<dialog
              id="panel"
              class="panel floating"
              part="panel"
              lang=${view.language}
              dir=${view.dir}
              aria-label=${t.heading}
              ?hidden=${!open}
              @keydown=${(e: KeyboardEvent) => e.key === 'Escape' && host.hide()}
              @cancel=${(e: Event) => {
                e.preventDefault();
                void host.hide();
              }}
              @close=${(e: Event) => !(e.target as HTMLDialogElement).open && host.open && host.hide()}
            >
              ${content}
            </dialog>`
      }
    `;
}

/** The panel's content, the same inline and floating. */
function renderContent(host: PanelHost, view: PanelView) {
  const { strings: t, state, context, on, draft, history, busy } = view;
  const empty = !state.history.length && !state.turns.length;
  const replying = Boolean(activeTurn(state));
  const remaining = messageMaxLength - draft.length;
  return html`
        <div class="header" part="header">
          <div class="titles">
            ${heading(view.level, t.heading)}
            ${host.subheading ? html`<p>${host.subheading}</p>` : nothing}
          </div>
          ${
            host.noHistory
              ? nothing
              : html`<button
                  type="button"
                  class="icon-button"
                  part="history-button"
                  aria-label=${t.conversations}
                  title=${t.conversations}
                  aria-pressed=${Boolean(history)}
                  @click=${on.toggleHistory}
                >
                  ${historyIcon}
                </button>`
          }
          ${
            empty
              ? nothing
              : html`<button
                  type="button"
                  class="icon-button"
                  part="download-button"
                  aria-label=${t.download}
                  title=${t.download}
                  @click=${on.download}
                >
                  ${downloadIcon}
                </button>`
          }
          <button
            type="button"
            class="icon-button"
            aria-label=${t.newConversation}
            title=${t.newConversation}
            @click=${on.newConversation}
          >
            ${newIcon}
          </button>
          ${view.inline ? nothing : html`<button type="button" class="icon-button" aria-label=${t.close} @click=${() => host.hide()}>${closeIcon}</button>`}
        </div>
        ${history ?? nothing}
        <div
          class="messages"
          part="messages"
          role="log"
          tabindex="-1"
          ?hidden=${Boolean(history)}
          aria-live="off"
          @scroll=${on.scrolled}
          @click=${on.click}
          @pointerover=${reveal}
          @focusin=${reveal}
        >
          ${host.greeting ? html`<div class="message assistant" part="message assistant-message" dir="auto" role="article" aria-label=${context.speaker}>${host.greeting}</div>` : nothing}
          ${
            empty && host.starters.length
              ? html`<div class="starters" role="group" aria-label=${t.suggestions}>
                  ${host.starters.map(
                    text =>
                      html`<button type="button" class="starter" part="starter" @click=${() => host.send(text).catch(() => {})}>${text}</button>`,
                  )}
                </div>`
              : nothing
          }
          ${renderEntries(host, view)}
          ${!view.pinned && replying ? html`<button type="button" class="jump" @click=${on.jump}>${t.newMessages}</button>` : nothing}
        </div>
        ${!host.endpoint && !view.error ? html`<div class="error" part="error" role="alert">${t.errorConfig}</div>` : nothing}
        ${view.error ? html`<div class="error" part="error" role="alert">${view.error}</div>` : nothing}
        <form part="composer" ?hidden=${Boolean(history)} @submit=${on.submit}>
          <textarea
            part="input"
            dir=${draft.trim() ? 'auto' : nothing}
            rows="1"
            aria-label=${t.placeholder}
            placeholder=${t.placeholder}
            .value=${draft}
            @input=${on.input}
            @keydown=${on.keydown}
          ></textarea>
          <button
            type="submit"
            class="send"
            part="send-button"
            aria-disabled=${!busy && !draft.trim()}
            @click=${on.sendOrStop}
          >${busy ? t.stop : t.send}</button>
        </form>
        ${remaining < 200 ? html`<div class="limit">${t.charactersLeft(Math.max(0, remaining))}</div>` : nothing}
    `;
}

/**
 * The messages. A message whose state and surroundings did not change is not drawn again. History comes in chunks
 * of 20 messages, and a chunk none of whose messages changed is not drawn again either, which is checked at the
 * cost of comparing references: a keystroke or a streaming frame costs the same under 500 messages as under none.
 * Entries only come and go at the end (or all at once), so drawing them in place is enough.
 */
function renderEntries(owner: PanelHost, { state, retryable, context }: PanelView) {
  const { strings, speaker, locale, headingLevel, commenting, thanked, offline } = context;
  // Code is drawn highlighted once the highlighter has come.
  const around = [strings, speaker, locale, headingLevel, offline, highlight];
  // The newest reply of the history shows its actions whole; the others, once hovered or focused.
  const newest = state.history.findLast(item => item.role === 'assistant');
  const draw = (subject: HistoryItem | Turn, turn: boolean) =>
    guard(
      [
        subject,
        subject === retryable,
        ...around,
        commenting === subject.id,
        thanked === subject.id,
        turn ? endOf(owner, subject.id) : subject === newest,
      ],
      () =>
        turn
          ? renderTurn(owner, subject as Turn, subject === retryable, context)
          : renderHistoryItem(owner, subject as HistoryItem, context, subject === newest),
    );
  const entries: (HistoryItem[] | Turn)[] = [];
  let run: HistoryItem[] = [];
  for (const entry of timeline(state)) {
    if ('item' in entry) {
      if (run.length === 20 || !run.length) entries.push((run = []));
      run.push(entry.item);
    } else {
      entries.push(entry.turn);
      run = [];
    }
  }
  return entries.map(entry =>
    Array.isArray(entry)
      ? guard(
          [...entry, ...around, commenting, thanked, newest],
          () => html`<div class="chunk">${entry.map(item => draw(item, false))}</div>`,
        )
      : draw(entry, true),
  );
}

/**
 * A click in the message list: a footnote shows its source, a code block's button copies it, a reply's copy button
 * the reply (then `say` tells a screen reader, and the button says, `t.copied`). Returns the citation opened, with
 * its footnote's number, when a footnote or a source was.
 */
export function clickInMessages(
  event: Event,
  state: ChatState,
  t: Strings,
  say: (text: string) => void,
): [Citation, number] | undefined {
  const target = event.target as HTMLElement;
  const cite = target.closest<HTMLElement>('a[data-cite]');
  const code = target.closest<HTMLElement>('[data-copy]');
  const reply = target.closest<HTMLElement>('[data-copy-reply]');
  const source = target.closest<HTMLElement>('[data-source-link]');
  const key = (cite ?? source ?? reply)?.closest<HTMLElement>('.item')?.dataset.key;
  const subject = state.turns.find(turn => turn.id === key) ?? state.history.find(item => item.id === key);
  if (cite) {
    event.preventDefault();
    const item = cite.closest('.item')?.querySelector<HTMLElement>(`[data-source="${cite.dataset.cite}"]`);
    if (item) showSource(item);
  } else if (code) {
    // A clipboard that refuses (a page without the permission) leaves the button as it was.
    copyCode(code, t.copied).catch(() => {});
  } else if (reply && subject) {
    // The reply's markdown is written by a chunk loaded by the first copy.
    const text = 'reply' in subject ? subject.reply : subject.text;
    const markdown = import('./keep.js').then(keep => keep.replyMarkdown(text, subject.citations, t));
    copy(reply, markdown, t.copied).then(
      () => say(t.copied),
      () => {},
    );
  }
  if (!cite && !source) return undefined;
  const index = Number(cite ? cite.dataset.cite : source!.dataset.sourceLink);
  const citation = subject?.citations[index];
  const footnote = Number(cite ? cite.textContent : (source!.closest('li') as HTMLLIElement | null)?.value);
  return citation && [citation, footnote || index + 1];
}
