/**
 * @module
 * The history view: the visitor's conversations with this persona, newest first, to
 * reopen, rename or delete. A chunk of its own, loaded the first time the visitor opens the view. It takes Lit's
 * `html` and `nothing` from the element rather than importing Lit, so that Lit stays in the element's one file.
 */
import type { html as litHtml, nothing as litNothing } from 'lit';
import type { ConversationList, ConversationSummary } from '../protocol.js';
import type { Strings } from './strings.js';

/** What the view shows: the conversations listed so far, and where the list goes on. */
export interface HistoryList {
  items: ConversationSummary[];
  next: string | null;
  loading: boolean;
  error: string;
  /** The conversation whose name is being edited. */
  renaming: string | null;
  /** The conversation whose delete waits for the visitor to confirm it. */
  deleting: string | null;
}

/** The view's own styles, added to the element's when the view first shows (written small: they ship as they are). */
const styles =
  '.history{flex:1;overflow-y:auto;padding:12px 16px;display:flex;flex-direction:column;gap:8px}.history [role=heading]{margin:4px 0 0;font-weight:bold}.history .back{align-self:flex-start}.history ul{list-style:none;margin:0;padding:0}.history li{display:flex;align-items:center;gap:6px;padding:6px 0;border-block-end:1px solid var(--_border)}.conversation{flex:1;min-inline-size:0;display:flex;flex-direction:column;align-items:flex-start;border:none;background:none;color:inherit;font:inherit;text-align:start;padding:4px;border-radius:8px}.conversation[aria-current]{background:var(--_surface)}.conversation .name{font-weight:600;max-inline-size:100%;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}.conversation .date{color:var(--_muted);font-size:0.85em}.rename,.confirm{flex:1;display:flex;flex-wrap:wrap;align-items:center;gap:6px}.confirm span{flex:1}.rename input{flex:1;min-inline-size:0;font:inherit;padding:4px 8px;border:1px solid var(--_border);border-radius:8px;background:var(--_bg);color:inherit}';

/** What the view needs of the element: its list (set to show the view, cleared to leave it) and its strings. */
export interface HistoryHost {
  /** The element's shadow root, for the view's styles. */
  readonly root: ShadowRoot;
  /** The list shown, and a change of it (undefined leaves the view). */
  readonly list: HistoryList | undefined;
  show(list: HistoryList | undefined): void;
  open(id: string): Promise<void>;
  /** The strings of the language shown. */
  strings(): Strings;
  /** Has screen readers say `text`, politely. */
  say(text: string): void;
}

/**
 * What the view needs of the conversations: the backend's list and its authenticated requests (a rename or a delete
 * is asked here, so that its code comes with the view's), the conversation shown, and a way to leave it.
 */
export interface Conversations {
  backend: {
    listConversations(cursor?: string | null): Promise<ConversationList>;
    request(path: string, init?: RequestInit): Promise<Response>;
  };
  readonly state: { conversationId: string | null };
  /** Forgets the conversation shown; the next message starts a new one. */
  newConversation(): void;
}

/** A conversation's path at the backend. */
const pathOf = (id: string) => `/conversations/${encodeURIComponent(id)}`;

const units: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
];

/** "3 days ago", "yesterday", "now", in the language shown. */
export function relativeTime(iso: string | null, language: string, now = Date.now()): string {
  const time = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(time)) return '';
  const seconds = Math.round((time - now) / 1000);
  const format = new Intl.RelativeTimeFormat(language, { numeric: 'auto' });
  for (const [unit, size] of units) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return format.format(0, 'second');
}

/** Lit's template tag and its empty value, as the element has them. */
export interface Lit {
  html: typeof litHtml;
  nothing: typeof litNothing;
}

export class HistoryView {
  #styled = false;
  /** Deleted here: a page read before the delete does not bring them back. */
  readonly #deleted = new Set<string>();

  constructor(
    readonly host: HistoryHost,
    readonly conversations: Conversations,
  ) {}

  /** Shows the view with the newest conversations. */
  async show() {
    const { root } = this.host;
    if (!this.#styled) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(styles);
      root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
      this.#styled = true;
    }
    this.host.show({ items: [], next: null, loading: true, error: '', renaming: null, deleting: null });
    await this.#page(null);
  }

  /**
   * Reads on through the list (the backend gives it in the service's order), up to 100 more conversations, and shows
   * all it has newest first. What changed meanwhile (a rename, a delete) stands: the new ones are added by id.
   */
  async #page(cursor: string | null) {
    this.#set({ loading: true });
    this.host.say(this.host.strings().loadingConversations);
    await this.#change(async () => {
      const { data: read, next } = await this.conversations.backend.listConversations(cursor);
      const shown = this.host.list?.items ?? [];
      const items = [
        ...shown,
        ...read.filter(item => !shown.some(old => old.id === item.id) && !this.#deleted.has(item.id)),
      ];
      const time = (item: ConversationSummary) => Date.parse(item.updatedAt ?? item.createdAt ?? '') || 0;
      const t = this.host.strings();
      this.host.say(items.length ? t.conversationCount(items.length) : t.noConversations);
      return { items: items.sort((a, b) => time(b) - time(a)), next, loading: false };
    });
  }

  /** Runs a change of the view's, showing an error in it when it fails. */
  async #change(work: () => Promise<Partial<HistoryList> | void>) {
    try {
      const change = await work();
      this.#set({ error: '', ...change });
    } catch {
      this.#set({ loading: false, error: this.host.strings().errorGeneric });
    }
  }

  #set(change: Partial<HistoryList>) {
    const list = this.host.list;
    if (list) this.host.show({ ...list, ...change });
  }

  #rename(id: string, name: string) {
    return this.#change(async () => {
      await this.conversations.backend.request(pathOf(id), {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: name.trim() }),
      });
      const items = this.host.list?.items.map(item => (item.id === id ? { ...item, name: name.trim() } : item));
      return { items, renaming: null };
    });
  }

  #remove(id: string) {
    return this.#change(async () => {
      await this.conversations.backend.request(pathOf(id), { method: 'DELETE' });
      // The conversation shown gives way to a new one.
      if (id === this.conversations.state.conversationId) this.conversations.newConversation();
      this.#deleted.add(id);
      return { items: this.host.list?.items.filter(item => item.id !== id), deleting: null };
    });
  }

  /** The view, its title a heading of `level` (one below the panel's). */
  render(
    { html, nothing }: Lit,
    list: HistoryList,
    current: string | null,
    t: Strings,
    language: string,
    level: number,
  ) {
    const nameOf = (item: ConversationSummary) => item.name?.trim() || t.untitled;
    const cancelOnEscape = (change: Partial<HistoryList>) => (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      event.stopPropagation();
      this.#set(change);
    };
    const row = (item: ConversationSummary) => {
      const name = nameOf(item);
      if (list.deleting === item.id) {
        return html`<li>
          <div class="confirm" role="group" aria-labelledby="delete-question" @keydown=${cancelOnEscape({ deleting: null })}>
            <span id="delete-question">${t.deleteQuestion(name)}</span>
            <button type="button" class="text-button" data-confirm @click=${() => this.#remove(item.id)}>
              ${t.delete}
            </button>
            <button type="button" class="text-button" data-cancel @click=${() => this.#set({ deleting: null })}>
              ${t.cancel}
            </button>
          </div>
        </li>`;
      }
      if (list.renaming === item.id) {
        return html`<li>
          <form
            class="rename"
            @submit=${(event: Event) => {
              event.preventDefault();
              const input = (event.target as HTMLFormElement).elements.namedItem('name') as HTMLInputElement;
              void this.#rename(item.id, input.value);
            }}
            @keydown=${cancelOnEscape({ renaming: null })}
          >
            <input
              name="name"
              dir=${item.name?.trim() ? 'auto' : nothing}
              aria-label=${t.conversationName}
              maxlength="100"
              .value=${item.name ?? ''}
              @input=${(event: Event) => {
                const field = event.target as HTMLInputElement;
                field.dir = field.value.trim() ? 'auto' : '';
              }}
            />
            <button type="submit" class="text-button">${t.save}</button>
            <button type="button" class="text-button" @click=${() => this.#set({ renaming: null })}>${t.cancel}</button>
          </form>
        </li>`;
      }
      return html`<li>
        <button
          type="button"
          class="conversation"
          part="history-item"
          data-id=${item.id}
          aria-current=${item.id === current ? 'true' : nothing}
          @click=${() => void this.host.open(item.id).catch(() => this.#change(() => Promise.reject()))}
        >
          <span class="name" dir="auto">${name}</span>
          <span class="date">${relativeTime(item.updatedAt ?? item.createdAt, language)}</span>
        </button>
        <button
          type="button"
          class="text-button"
          aria-label=${`${t.rename}: ${name}`}
          @click=${() => this.#set({ renaming: item.id, deleting: null })}
        >
          ${t.rename}
        </button>
        <button
          type="button"
          class="text-button"
          data-delete=${item.id}
          aria-label=${`${t.delete}: ${name}`}
          @click=${() => this.#set({ deleting: item.id, renaming: null })}
        >
          ${t.delete}
        </button>
      </li>`;
    };
    return html`<div class="history" part="history" aria-busy=${list.loading ? 'true' : 'false'}>
      <button type="button" class="text-button back" @click=${() => this.host.show(undefined)}>
        ${t.backToChat}
      </button>
      <div id="history-heading" role="heading" aria-level=${level} tabindex="-1">${t.conversations}</div>
      ${list.items.length ? html`<ul aria-labelledby="history-heading">${list.items.map(row)}</ul>` : nothing}
      ${!list.items.length && !list.loading && !list.error ? html`<p>${t.noConversations}</p>` : nothing}
      ${list.error ? html`<p class="error" role="alert">${list.error}</p>` : nothing}
      ${
        list.next && !list.loading
          ? html`<button type="button" class="text-button" @click=${() => this.#page(list.next)}>${t.more}</button>`
          : nothing
      }
    </div>`;
  }
}
