/**
 * @module
 * `<persona-chat>`: the element class, holding its public properties and methods, the state it draws and its small
 * handlers. It is made of parts: the conversation (`controller.ts`), the panel (`panel-controller.ts`, `panel.ts`),
 * the history view (`history-controller.ts`), the votes (`feedback-controller.ts`), the language and the strings
 * (`localize-controller.ts`) and what a screen reader hears (`announcer.ts`). `define.ts` registers it.
 */
import { LitElement, nothing } from 'lit';
import type { PropertyValues } from 'lit';
import { ChatController } from './controller.js';
import type { ReplyResult } from './controller.js';
import type { PersonaChatError } from './errors.js';
import {
  PersonaChatCitationEvent,
  PersonaChatCloseEvent,
  PersonaChatConversationEvent,
  PersonaChatDraftEvent,
  PersonaChatErrorEvent,
  PersonaChatMessageEvent,
  PersonaChatOpenEvent,
  PersonaChatReadyEvent,
  PersonaChatSendEvent,
} from './events.js';
import { isRightToLeft } from './language.js';
import { LocalizeController } from './localize-controller.js';
import { Announcer } from './announcer.js';
import { PanelController } from './panel-controller.js';
import { FeedbackController } from './feedback-controller.js';
import { clickInMessages, renderPanel } from './panel.js';
import type { PanelActions } from './panel.js';
import { HistoryController } from './history-controller.js';
import { endsDrawn, forgetViews } from './messages.js';
import { styles } from './persona-chat.styles.js';
import { Transcript } from './transcript.js';
import { TurnStatus, activeTurn, currentTurn, timeline } from './state.js';
import type { StorageKind } from './storage.js';
import { errorText } from './strings.js';
import type { Strings } from './strings.js';
import { headingLevel, parseList, parseStrings, warnUnknown } from './attributes.js';
import type { ConversationSummary } from '../protocol.js';

/**
 * An AI persona chat: replies stream in word by word as safe markdown with numbered citation footnotes.
 *
 * @summary A chat with an AI persona, through the persona-chat backend at `endpoint`.
 * @tagname persona-chat
 *
 * @fires persona-chat-ready - The element is set up.
 * @fires persona-chat-open - The panel opened.
 * @fires persona-chat-close - The panel closed.
 * @fires persona-chat-send - Before a message is sent; cancelable, and `text` may be rewritten.
 * @fires persona-chat-message - A reply finished, with its text and citations.
 * @fires persona-chat-conversation - A conversation started or was restored.
 * @fires persona-chat-error - Something failed; `code` and `retryable` say what.
 * @fires persona-chat-citation - The visitor opened a source.
 * @fires persona-chat-feedback - Thumbs up or down on a reply, or the vote taken back (`value` null).
 * @fires persona-chat-draft - The visitor's text in the message box changed (typed, sent, or given back).
 *
 * @attr lang - The language of the element's strings; the page's when absent.
 * @attr dir - `rtl` or `ltr`, instead of the direction of the element's language.
 *
 * @csspart launcher - The round button that opens the panel (launcher mode).
 * @csspart unread-badge - On the launcher: replies that finished while the panel was closed.
 * @csspart panel - The chat panel.
 * @csspart header - The panel's header.
 * @csspart messages - The message list.
 * @csspart message - Each message.
 * @csspart user-message - Each of the visitor's messages (also `message`).
 * @csspart assistant-message - Each of the persona's replies (also `message`).
 * @csspart citations - The sources under a reply.
 * @csspart code-block - A code block in a reply.
 * @csspart copy-button - A code block's copy button.
 * @csspart copy-reply-button - A finished reply's copy button (its text as markdown, with its sources).
 * @csspart retry-button - Retry on a failed or stopped reply.
 * @csspart starter - A suggested first question of an empty conversation.
 * @csspart history-button - The header button that shows the history view.
 * @csspart download-button - The header button that saves the conversation as a markdown file.
 * @csspart history - The history view: the visitor's conversations with this persona.
 * @csspart history-item - A conversation in the history view.
 * @csspart composer - The form at the bottom.
 * @csspart input - The message box.
 * @csspart send-button - The send (or stop) button.
 * @csspart error - An error notice.
 *
 * @cssstate idle - No message yet. Each state mirrors the `turn-status` attribute: the current turn's status.
 * @cssstate queued - The current turn waits behind another.
 * @cssstate accepting - The message is being sent (session, conversation, request).
 * @cssstate streaming - The reply is being written.
 * @cssstate done - The reply is complete.
 * @cssstate stopped - The visitor stopped the reply.
 * @cssstate failed - The reply failed; Retry is offered when it can be retried.
 * @cssstate interrupted - The reply was cut off (its producer went away); Retry is offered.
 * @cssstate online - The connection to the replies is well. These three mirror the `connection-state` attribute.
 * @cssstate reconnecting - A reply's stream was cut or stalled, and is being followed again.
 * @cssstate offline - The browser is offline; a reply being written goes on once it is back.
 *
 * @cssprop [--persona-chat-accent-color=#4f46e5] - Launcher, user bubbles, links, buttons.
 * @cssprop [--persona-chat-on-accent-color=#ffffff] - Text on the accent colour.
 * @cssprop [--persona-chat-background-color=#ffffff] - The panel's background.
 * @cssprop [--persona-chat-text-color=#1f2937] - Text.
 * @cssprop [--persona-chat-muted-color=#6b7280] - Secondary text.
 * @cssprop [--persona-chat-surface-color=#f3f4f6] - Reply bubbles and the message box.
 * @cssprop [--persona-chat-border-color=#e5e7eb] - Borders.
 * @cssprop [--persona-chat-user-bubble-color=var(--persona-chat-accent-color)] - The visitor's bubbles.
 * @cssprop [--persona-chat-user-text-color=var(--persona-chat-on-accent-color)] - Text in the visitor's bubbles.
 * @cssprop [--persona-chat-error-color=#b91c1c] - Error notices.
 * @cssprop [--persona-chat-font-family=system-ui] - Font.
 * @cssprop [--persona-chat-font-size=15px] - Base font size.
 * @cssprop [--persona-chat-radius=16px] - Panel corners.
 * @cssprop [--persona-chat-bubble-radius=14px] - Message bubble corners.
 * @cssprop [--persona-chat-panel-width=380px] - Panel width (launcher mode).
 * @cssprop [--persona-chat-panel-height=600px] - Panel height (launcher mode).
 * @cssprop [--persona-chat-offset=20px] - Distance of the launcher and panel from the viewport's edges.
 * @cssprop [--persona-chat-launcher-size=56px] - The launcher's diameter.
 * @cssprop [--persona-chat-z-index=2147483000] - Stacking of the launcher and panel.
 * @cssprop [--persona-chat-shadow=0 12px 40px rgb(0 0 0 / 0.18)] - The floating panel's and launcher's shadow.
 * @cssprop [--persona-chat-focus-ring-color=var(--persona-chat-accent-color)] - Focus rings.
 * @cssprop [--persona-chat-code-keyword-color=#b3262e] - Keywords and tag names in highlighted code.
 * @cssprop [--persona-chat-code-string-color=#0a3069] - Strings in highlighted code.
 * @cssprop [--persona-chat-code-comment-color=#57606a] - Comments in highlighted code.
 * @cssprop [--persona-chat-code-number-color=#0550ae] - Numbers, variables and entities in highlighted code.
 * @cssprop [--persona-chat-code-function-color=#6639ba] - Function names, keys and attribute names in highlighted
 *   code.
 */
export class PersonaChat extends LitElement {
  static override styles = styles;
  /** The reactive properties: the public ones, then the internal state that is drawn. */
  static override properties = {
    endpoint: {},
    personaId: { attribute: 'persona-id' },
    mode: { reflect: true },
    open: { type: Boolean, reflect: true },
    heading: {},
    subheading: {},
    greeting: {},
    placeholder: {},
    starters: { converter: { fromAttribute: parseList } },
    position: { reflect: true },
    theme: { reflect: true },
    headingLevel: { type: Number, attribute: 'heading-level' },
    noHistory: { type: Boolean, attribute: 'no-history' },
    storage: {},
    loading: {},
    metadata: { attribute: false },
    strings: { converter: { fromAttribute: parseStrings } },
    fetch: { attribute: false },
    turnStatus: { attribute: 'turn-status', reflect: true },
    connectionState: { attribute: 'connection-state', reflect: true },
    draft: { state: true },
    pinned: { state: true },
    errorMessage: { state: true },
    commenting: { state: true },
    thanked: { state: true },
    unread: { state: true },
  };
  // Their accessors are made now, not when the tag is registered: a wrapper that tells properties from attributes by
  // the prototype (as @lit/react does) sees them before then.
  static {
    this.finalize();
  }

  /** The URL where the persona-chat backend is mounted, e.g. `/persona-chat`. Required. */
  endpoint = '';
  /** Which of the backend's personas to talk to; the backend decides what is allowed. */
  personaId = '';
  /** `launcher` (a round button opening a panel) or `inline` (fills its box). */
  mode: 'launcher' | 'inline' = 'launcher';
  /** Whether the panel is open (always, in inline mode). */
  open = false;
  /** The panel's title. */
  heading = '';
  /** A line under the title. */
  subheading = '';
  /** The persona's first bubble, at the top of every conversation; shown, never sent. */
  greeting = '';
  /** The message box's placeholder. */
  placeholder = '';
  /**
   * A few suggested first questions, shown as buttons in an empty conversation and sent on click. As an attribute,
   * a JSON array or the questions separated by `|`.
   */
  starters: string[] = [];
  /** `bottom-right` or `bottom-left`, for the launcher. */
  position: 'bottom-right' | 'bottom-left' = 'bottom-right';
  /** `auto`, `light` or `dark`. */
  theme: 'auto' | 'light' | 'dark' = 'auto';
  /**
   * The level of the panel's title, 1 to 6, for a page whose outline puts the chat elsewhere than under its `<h1>`;
   * a reply's headings and the history view's are one below.
   */
  headingLevel = 2;
  /** Hides the history view (the visitor's other conversations), for a site that wants one thread. */
  noHistory = false;
  /** Where the conversation id is kept: `local`, `session` or `none`. */
  storage: StorageKind = 'local';
  /**
   * When the launcher script (`persona-chat.js`) loads the chat: `intent` (a pointer over it, the focus, a touch, a
   * press), `idle` (when the browser is idle) or `eager` (at once). Inline mode, `open` and a reply to resume load it
   * at once whatever this says. Read by the launcher before the chat is loaded.
   */
  loading: 'intent' | 'idle' | 'eager' = 'intent';
  /** Page context sent when a conversation starts (flat string values). */
  metadata: Record<string, string> | undefined;
  /**
   * Overrides for any UI string, on top of the language's table. As an attribute, JSON (where a string is a
   * function of a number, `{n}` stands for the number: `{"charactersLeft": "{n} left"}`).
   */
  strings: Partial<Strings> | undefined;
  /** The transport to the backend; default `globalThis.fetch`. */
  fetch: typeof globalThis.fetch = (input, init) => globalThis.fetch(input, init);

  /**
   * The status of the current turn (the one being answered, else the newest): `idle` before any, then `queued`,
   * `accepting`, `streaming`, `done`, `stopped`, `failed` or `interrupted`. Reflected, and a custom state.
   */
  turnStatus: TurnStatus | 'idle' = 'idle';

  /**
   * The connection to the replies: `online`, `reconnecting` (a reply's stream was cut or stalled, and is being
   * followed again) or `offline` (the browser is; a reply goes on when it is back). Reflected, and a custom state.
   */
  connectionState: 'online' | 'reconnecting' | 'offline' = 'online';

  private draft = '';
  private pinned = true;
  private errorMessage = '';
  /** The reply whose thumbs-down offers a comment box, and the one thanked for its comment. */
  private commenting: string | null = null;
  private thanked: string | null = null;
  /** Replies that finished while the panel was closed. */
  private unread = 0;
  /** The first element of the shadow root that `selector` matches, once it is drawn. */
  #find<T extends Element = HTMLElement>(selector: string) {
    return this.renderRoot?.querySelector<T>(selector) ?? undefined;
  }
  get #input() {
    return this.#find<HTMLTextAreaElement>('textarea');
  }
  get #list() {
    return this.#find('.messages');
  }
  /** The message list's keyboard order: one Tab stop, the arrow keys between messages. */
  #transcript: Transcript | undefined;

  readonly #chat = new ChatController(this, {
    onReply: (reply, id) => this.#replied(reply, id),
    onError: (error, turn) => this.#failed(error, turn),
    onConversation: (id, restored) => {
      if (restored) forgetViews(this);
      if (!this.draft) this.draft = this.#chat.tab.draft(id);
      this.dispatchEvent(new PersonaChatConversationEvent(id, restored));
    },
    // The turn's status and the connection's show at once (they change rarely); the messages render once per frame.
    onChange: () => {
      const { state } = this.#chat;
      this.turnStatus = currentTurn(state)?.status ?? 'idle';
      this.connectionState = !navigator.onLine
        ? 'offline'
        : state.turns.some(turn => turn.reconnecting)
          ? 'reconnecting'
          : 'online';
    },
    onUnsent: texts => this.#keepDraft([...texts, this.draft].filter(Boolean).join('\n')),
  });
  readonly #announcer = new Announcer(this, {
    region: () => this.#find('.live'),
    list: () => this.#list,
    strings: () => this.#text,
    speaker: () => this.heading || this.#text.assistant,
  });
  readonly #votes = new FeedbackController(this, this.#chat, {
    show: (commenting, thanked = this.thanked) => {
      this.commenting = commenting;
      this.thanked = thanked;
    },
    failed: error => this.#failed(error),
  });
  readonly #history = new HistoryController(this, this.#chat, {
    open: id => this.openConversation(id),
    strings: () => this.#text,
    say: text => this.#announcer.say(text),
    failed: () => void (this.errorMessage = this.#text.errorNetwork),
  });
  readonly #internals = this.attachInternals();
  // The replies' views were made with the strings before (a code block's copy button, a footnote's label).
  readonly #localize = new LocalizeController(this, () => forgetViews(this));
  readonly #panel = new PanelController(this);

  static override get observedAttributes() {
    return [...super.observedAttributes, 'lang', 'dir'];
  }

  override attributeChangedCallback(name: string, old: string | null, value: string | null) {
    super.attributeChangedCallback(name, old, value);
    if (name === 'lang') this.#localize.update();
    if (name === 'dir') this.requestUpdate();
  }

  /** The strings shown; the same object until what they come from changes, so that unchanged messages are skipped. */
  get #text(): Strings {
    return this.#localize.strings(this.strings, this.heading, this.placeholder);
  }

  /** `headingLevel` if it is a level, else 2. */
  get #level() {
    return headingLevel(this.headingLevel);
  }

  /** Inline mode; any other value is the launcher's (and warned about once). */
  get #inline() {
    return this.mode === 'inline';
  }

  protected override createRenderRoot() {
    this.#panel.adopt(this.shadowRoot);
    return super.createRenderRoot();
  }

  override connectedCallback() {
    super.connectedCallback();
    // After the first update, which restores properties set before the element was defined (`fetch` among them).
    void this.updateComplete.then(() => {
      if (!this.isConnected) return;
      if (!this.draft) this.draft = this.#chat.tab.draft(null);
      // A reply a reload left running is followed at once, to be counted on the launcher when it ends.
      if ((this.#inline || this.open || this.#chat.tab.pending().length) && this.endpoint) void this.#chat.start();
    });
  }

  protected override firstUpdated() {
    warnUnknown(this);
    this.dispatchEvent(new PersonaChatReadyEvent());
  }

  /** Also waits for the end of a reply drawn in the frame after its text: its actions (`messages.ts`). */
  protected override async getUpdateComplete(): Promise<boolean> {
    const done = await super.getUpdateComplete();
    const ending = endsDrawn(this);
    return ending ? ending.then(() => this.updateComplete) : done;
  }

  protected override willUpdate(changed: PropertyValues<this>) {
    // A reply's markdown view takes its heading level when it is made.
    if (changed.has('headingLevel') && changed.get('headingLevel') !== undefined) forgetViews(this);
  }

  protected override updated(changed: PropertyValues<this>) {
    if (this.#list !== this.#transcript?.list) {
      this.#transcript?.disconnect();
      this.#transcript = this.#list && new Transcript(this.#list);
    }
    if (changed.has('open') && changed.get('open') !== undefined) {
      this.dispatchEvent(this.open ? new PersonaChatOpenEvent() : new PersonaChatCloseEvent());
      if (this.open) {
        this.unread = 0;
        void this.#chat.start();
        this.#input?.focus();
      }
    }
    if (this.pinned && this.#list) this.#list.scrollTop = this.#list.scrollHeight;
    const changes = changed as Map<string, unknown>;
    this.#panel.refocus(changes, this.commenting);
    if (changes.has('draft')) this.#announcer.countDown(this.draft.length);
    // While the reply is awaited, a screen reader hears that it is coming; the reply replaces it when done.
    if (changed.has('turnStatus') && this.turnStatus === TurnStatus.accepting) this.#announcer.say(this.#text.typing);
    if (changed.has('turnStatus') || changed.has('connectionState')) {
      try {
        const { states } = this.#internals;
        states.clear();
        states.add(this.turnStatus);
        states.add(this.connectionState);
      } catch {
        // Custom states are missing in older engines; the attribute says the same.
      }
    }
  }

  /** Opens the panel; resolves once `persona-chat-open` fired. */
  async show() {
    if (this.open) return;
    this.open = true;
    await this.updateComplete;
  }

  /** Closes the panel; resolves once `persona-chat-close` fired. */
  async hide() {
    if (!this.open) return;
    this.open = false;
    await this.#panel.closed();
  }

  /** Opens or closes the panel. */
  toggle() {
    return this.open ? this.hide() : this.show();
  }

  /** Sends a message; resolves with the reply once it is done, rejects with the error the event carries. */
  async send(text: string): Promise<ReplyResult> {
    const event = new PersonaChatSendEvent(text);
    this.dispatchEvent(event);
    if (event.defaultPrevented || !event.detail.text.trim())
      throw new DOMException('The message was not sent.', 'AbortError');
    this.errorMessage = '';
    return this.#chat.send(event.detail.text);
  }

  /**
   * Stops the reply being written (queued messages go back to the message box); resolves once the stopped reply's
   * `persona-chat-message` fired.
   */
  async stop() {
    this.#chat.stop();
    await this.updateComplete;
  }

  /** The visitor's conversations with this persona (the first pages, up to 100), as the backend lists them. */
  async listConversations(): Promise<ConversationSummary[]> {
    return (await this.#chat.backend.listConversations()).data;
  }

  /**
   * Shows another of the visitor's conversations (a reply still being written goes on and is followed). Resolves
   * once it is shown, after `persona-chat-conversation` with `restored: true`.
   */
  async openConversation(id: string) {
    this.#leave();
    await this.#chat.openConversation(id);
    this.#history.show(undefined);
    await this.updateComplete;
  }

  /** Forgets the current conversation; the next message starts a new one. Resolves once the panel is cleared. */
  async newConversation() {
    this.#leave();
    this.#chat.newConversation();
    this.#history.show(undefined);
    await this.updateComplete;
  }

  /**
   * The conversation as markdown, as the header's download button saves it: its title, then each message with who
   * wrote it and when (where known), and each reply's sources.
   */
  async exportTranscript(): Promise<string> {
    const { transcript } = await import('./keep.js');
    const t = this.#text;
    return transcript(
      timeline(this.#chat.state),
      this.#chat.sentAt,
      this.heading || t.assistant,
      t,
      this.#localize.locale,
    );
  }

  /** Leaves what the panel shows of the conversation: a comment not sent, the replies drawn, an error, a notice. */
  #leave() {
    this.#votes.keep();
    forgetViews(this);
    this.errorMessage = '';
    this.#announcer.say('');
  }

  #replied(reply: ReplyResult, id: string) {
    this.requestUpdate();
    if (this.#inline || this.open) {
      // Read out once drawn whole, with its actions, not in the task that ends its text.
      void this.updateComplete.then(() => {
        this.#announcer.announce(id);
        this.requestUpdate();
      });
    } else {
      this.unread++;
      this.#announcer.say(this.#text.unread(this.unread));
    }
    this.dispatchEvent(
      new PersonaChatMessageEvent(reply.messageId, reply.content, reply.citations, reply.finishReason),
    );
  }

  /** Puts `text` in the message box, as if typed (without `persona-chat-draft`); it is kept for a reload of the tab. */
  setDraft(text: string) {
    this.#keepDraft(text, false);
  }

  /** Puts the focus in the message box, opening the panel first if it is closed; resolves once it is there. */
  async focusComposer() {
    if (!this.#inline) await this.show();
    await this.updateComplete;
    this.#input?.focus();
  }

  /** Sets the message box's text, keeps it for a reload of the tab, and tells the page unless the page set it. */
  #keepDraft(text: string, tell = true) {
    this.draft = text;
    this.#chat.tab.saveDraft(this.#chat.state.conversationId, text);
    if (tell) this.dispatchEvent(new PersonaChatDraftEvent(text));
  }

  /** Says what failed: above the message box, or (a turn's failure, which the transcript shows) to a screen reader. */
  #failed(error: PersonaChatError, turn?: string) {
    const text = errorText(this.#text, error.code);
    if (turn) this.#announcer.say(text);
    else this.errorMessage = text;
    this.dispatchEvent(new PersonaChatErrorEvent(error.code, error.retryable, error));
  }

  /** Whether a turn is being answered or waits: the button is Stop. */
  get #busy() {
    const { state } = this.#chat;
    return Boolean(activeTurn(state)) || state.turns.some(turn => turn.status === TurnStatus.queued);
  }

  #retry() {
    this.errorMessage = '';
    void this.#chat.retry()?.catch(() => {});
    // The Retry button goes away: the focus moves to the message box.
    void this.updateComplete.then(() => this.#input?.focus());
  }

  override render() {
    const t = this.#text;
    const language = this.#localize.shown.language;
    return renderPanel(this, {
      strings: t,
      context: {
        strings: t,
        speaker: this.heading || t.assistant,
        locale: this.#localize.locale,
        actions: { retry: () => this.#retry(), feedback: (...args) => this.#votes.give(...args) },
        commenting: this.commenting,
        thanked: this.thanked,
        offline: this.connectionState === 'offline',
        form: this.#votes.form(t),
        headingLevel: this.#level + 1,
      },
      state: this.#chat.state,
      inline: this.#inline,
      unread: this.unread,
      language,
      dir: this.hasAttribute('dir') ? nothing : isRightToLeft(language) ? 'rtl' : 'ltr',
      level: this.#level,
      history: this.#history.render(t, language, this.#level + 1),
      draft: this.draft,
      pinned: this.pinned,
      error: this.errorMessage,
      busy: this.#busy,
      retryable: this.#chat.retryable(),
      on: this.#actions,
    });
  }

  /** What the panel's controls do. */
  readonly #actions: PanelActions = {
    toggleHistory: () => void this.#history.toggle(),
    newConversation: () => void this.newConversation().then(() => this.#input?.focus()),
    download: async () => (await import('./keep.js')).save(await this.exportTranscript()),
    scrolled: () => {
      const list = this.#list;
      if (list) this.pinned = list.scrollHeight - list.scrollTop - list.clientHeight < 40;
    },
    click: event => {
      const cited = clickInMessages(event, this.#chat.state, this.#text, text => this.#announcer.say(text));
      if (cited) this.dispatchEvent(new PersonaChatCitationEvent(...cited));
    },
    submit: event => {
      event.preventDefault();
      const text = this.draft.trim();
      if (!text) return;
      this.#keepDraft('');
      this.pinned = true;
      this.send(text).catch(() => {});
    },
    input: event => this.#keepDraft((event.target as HTMLTextAreaElement).value),
    keydown: event => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        this.#actions.submit(event);
      }
      if (event.key === 'Escape' && !this.#inline) void this.hide();
    },
    // The one Send/Stop button: it keeps its identity (and the focus) while its label and action change.
    sendOrStop: event => {
      if (!this.#busy) return;
      event.preventDefault();
      void this.stop();
    },
    jump: () => void (this.pinned = true),
  };
}

declare global {
  interface HTMLElementTagNameMap {
    'persona-chat': PersonaChat;
  }
}
