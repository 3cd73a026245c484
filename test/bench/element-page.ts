// Runs in Chromium, for `npm run bench`: <persona-chat> as a page gets it (the built chunk from dist/, production
// mode), beside deep-chat as its package ships it (deepChat.bundle.js) and floors of plain DOM. It restores a
// conversation of 500 messages, types under it, streams a reply, and opens the panel from the launcher; the bench
// (element.ts) reads the CPU and the heap around these steps.
//
// The backend is stood in for: the element's `fetch` property is a function that answers the session, the
// conversation and the reply stream from memory, at once, in the protocol's shapes (src/protocol.ts), so that the
// bench measures the element's rendering alone, not a network or a server.
import type { Citation, ConversationDetail, MessageView, SessionResponse, StreamEvents } from '../../src/protocol.js';
import { afterPaint, feed, longTasks, paintedWhen } from './frames.js';
import { deltas, makeList, makeReply, makeTable } from './reply.js';

/** What is measured: the element, its peer, or a floor of plain DOM (divs for a restore, a `<pre>` for a reply). */
export type Target = 'persona-chat' | 'deep-chat' | 'divs' | 'pre';

const endpoint = '/api';
const conversationId = 'c-bench';
const question = 'What does the returns policy say about tents?';
/** Where the element keeps the conversation id: `persona-chat:{endpoint}:{persona}:{user key}:conversation`. */
const conversationKey = `persona-chat:${endpoint}:default:bench:conversation`;
const deepChatUrl = '/deep-chat.js';
const size = { width: '380px', height: '600px' };

/**
 * A conversation of `count` messages, the visitor's and the persona's in turn; each reply is 0.3 to 1.5 KB of
 * markdown (headings, paragraphs with emphasis and links, lists, and in the longer ones code and a table).
 */
export function conversation(count: number): ConversationDetail {
  const start = Date.parse('2025-01-01T00:00:00Z');
  const at = (i: number) => new Date(start + i * 60_000).toISOString();
  const messages: MessageView[] = Array.from({ length: count }, (_, i) => {
    const reply = i % 2 === 1;
    return {
      id: `m-${i}`,
      role: reply ? 'assistant' : 'user',
      content: reply
        ? makeReply(300 + ((i * 137) % 1200), i)
        : `Question ${(i + 2) / 2}: how long do I have to return ${['a tent', 'boots', 'a bag'][i % 3]}?`,
      createdAt: at(i),
      runId: reply ? `r-${i}` : null,
      feedback: null,
      citations: [],
    };
  });
  return {
    id: conversationId,
    name: 'Bench',
    status: null,
    active: true,
    personaId: null,
    messageCount: count,
    metadata: {},
    createdAt: count ? at(0) : null,
    updatedAt: count ? at(count - 1) : null,
    messages,
    runs: [],
  };
}

/** The replies a bench can stream or restore: the 40 KB reply, or a long table or list (about 196 KB each). */
export type Reply = 'reply' | 'table' | 'list';

const replies: Record<Reply, () => string> = {
  reply: () => makeReply(),
  table: () => makeTable(),
  list: () => makeList(),
};

/**
 * The sources of the streamed reply, which cites `[1]` to `[5]`: as the service gives them, after the text and before
 * the end, each with a name, an address and a passage.
 */
const sources: Citation[] = ['Returns', 'Shipping', 'Tents', 'Boots', 'Warranty'].map((name, i) => ({
  documentId: `guide-${i + 1}`,
  sourceName: `${name} guide`,
  sourceUrl: `https://shop.example.com/help/${name.toLowerCase()}`,
  partitions: [{ text: `${name}: items can be returned within 30 days of delivery, unused.`, relevance: 0.9 - i / 10 }],
}));

/** A conversation of one question and its reply, `text`. */
function exchange(text: string): ConversationDetail {
  const detail = conversation(2);
  detail.messages[1]!.content = text;
  return detail;
}

/**
 * What the bench uses of deep-chat's documented API (deepchat.dev: `history`, `connect` with a `handler` and
 * `stream: true`, `submitUserMessage`). Its own typings resolve only with a bundler's module resolution, not this
 * project's NodeNext.
 */
interface DeepChat extends HTMLElement {
  chatStyle: Partial<CSSStyleDeclaration>;
  history: { role: 'user' | 'ai'; text: string }[];
  connect: { stream: boolean; handler: (body: unknown, signals: Signals) => void };
  submitUserMessage(content: { text: string }): void;
}

interface Signals {
  onOpen(): void;
  onResponse(response: { text: string }): Promise<void>;
  onClose(): void;
}

type Send = <N extends keyof StreamEvents>(name: N, data: StreamEvents[N]) => void;

/**
 * The stand-in backend: a session, the conversation (its JSON as given), and a reply stream that `reply` writes
 * (SSE frames, `meta` first and without an id, as the backend sends them). Anything else is the backend's 404.
 */
function standIn(conversationJson: string, reply: (send: Send, close: () => void) => void): typeof fetch {
  const json = (body: string, status = 200) =>
    new Response(body, { status, headers: { 'content-type': 'application/json' } });
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input), location.href);
    const route = `${init?.method ?? 'GET'} ${url.pathname.slice(endpoint.length)}`;
    if (route === 'POST /session') {
      const session: SessionResponse = {
        token: 'bench-token',
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        user: { key: 'bench' },
        persona: { personaId: null },
      };
      return json(JSON.stringify(session));
    }
    if (route === `GET /conversations/${conversationId}`) return json(conversationJson);
    if (route === `POST /conversations/${conversationId}/messages`) {
      const encoder = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          let id = 0;
          const send: Send = (name, data) =>
            controller.enqueue(
              encoder.encode(
                `event: ${name}\n${name === 'meta' ? '' : `id: ${++id}\n`}data: ${JSON.stringify(data)}\n\n`,
              ),
            );
          reply(send, () => controller.close());
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
    }
    const error = { error: { code: 'not_found', message: 'Not found.', retryable: false, requestId: 'bench' } };
    return json(JSON.stringify(error), 404);
  };
}

/** The parts of the built element the bench uses (its class is not imported: it comes from dist/ at run time). */
interface PersonaChatElement extends HTMLElement {
  fetch: typeof fetch;
  updateComplete: Promise<boolean>;
}

/** Counts the nodes (all kinds) and the elements under `root`, shadow trees included; `root` itself is not counted. */
function countNodes(root: Node): { nodes: number; elements: number } {
  let nodes = 0;
  let elements = 0;
  const visit = (parent: Node) => {
    for (let child = parent.firstChild; child; child = child.nextSibling) {
      nodes++;
      if (child instanceof Element) {
        elements++;
        if (child.shadowRoot) visit(child.shadowRoot);
      }
      visit(child);
    }
  };
  visit(root);
  return { nodes, elements };
}

const stage = () => document.getElementById('stage')!;

/** The message list of the chat on the stage: persona-chat's `messages` part, or deep-chat's scrolling box. */
function scroller(): HTMLElement | undefined {
  const root = element?.shadowRoot;
  if (!root) return undefined;
  if (target === 'persona-chat') return root.querySelector<HTMLElement>('[part~="messages"]') ?? undefined;
  return [...root.querySelectorAll<HTMLElement>('*')].find(
    el => el.scrollHeight > el.clientHeight + 1 && ['auto', 'scroll'].includes(getComputedStyle(el).overflowY),
  );
}

/** The text the target shows of the reply it was streamed, to check that all of it is shown. */
function shownReply(): string {
  const root = element?.shadowRoot;
  if (target === 'persona-chat') return [...root!.querySelectorAll('.message.assistant')].at(-1)?.textContent ?? '';
  if (target === 'deep-chat') return [...root!.querySelectorAll('.ai-message-text')].at(-1)?.textContent ?? '';
  return element?.textContent ?? '';
}

/** Whether persona-chat's newest reply is drawn as it ends: its text whole, its sources and its actions. */
function replyEnded(): boolean {
  const reply = [...element!.shadowRoot!.querySelectorAll('.message.assistant')].at(-1);
  return (
    reply?.getAttribute('aria-busy') === 'false' &&
    !reply.querySelector('.markdown[aria-busy]') &&
    Boolean(reply.querySelector('[part~="citations"]') && reply.querySelector('.reply-actions'))
  );
}

let target: Target = 'persona-chat';
/** When the last `restore()` started. */
let restoreStarted = 0;
/** The reply `stream()` streams, and when its last delta came. */
let streamed: Reply = 'reply';
let lastDelta = 0;
let conversationJson = '';
let pieces: string[] = [];
let element: HTMLElement | undefined;
/** Where a reply being streamed goes: set by `stream()`, called by the stand-in or deep-chat's handler. */
let onReply: ((send: Send, close: () => void) => void) | undefined;
let onDeepChatReply: ((signals: Signals) => void) | undefined;

const bench = {
  /**
   * Loads the code of `what` (the built chat chunk, `chunk`, for persona-chat; deep-chat's bundle) and makes the
   * conversation's JSON and the reply's deltas, so that none of it is in what is measured next. With a `reply` other
   * than the 40 KB one, it is what streams; `restoring`: the conversation is one question and that reply.
   */
  async load(what: Target, messages: number, chunk: string, reply: Reply = 'reply', restoring = false) {
    target = what;
    // Loaded from the bench's server at run time, not bundled into this page.
    if (what === 'persona-chat') await import(chunk);
    if (what === 'deep-chat') await import(deepChatUrl);
    const text = replies[reply]();
    conversationJson = JSON.stringify(restoring ? exchange(text) : conversation(messages));
    pieces = deltas(text, 2000);
    streamed = reply;
  },

  /**
   * Once the chat shows a conversation or a reply: the paint of the first frame in which every reply is drawn whole
   * (none is busy drawing its pieces), from the start of the last `restore()` or the last delta of `stream()`; and
   * the rows of tables and the list items the replies show.
   */
  async drawn(since: 'restore' | 'stream'): Promise<{ drawnMs: number; rows: number }> {
    const root = element!.shadowRoot!;
    const painted = await paintedWhen(() => !root.querySelector('.markdown[aria-busy]'));
    const from = since === 'restore' ? restoreStarted : lastDelta;
    return { drawnMs: painted - from, rows: root.querySelectorAll('.markdown :is(tbody tr, li)').length };
  },

  /**
   * Shows the conversation, restored: from putting the chat on the page (or, for the floor, parsing the JSON) to
   * the paint of the frame that first shows all of its messages. Returns that time and the DOM it added.
   */
  async restore(): Promise<{ renderToPaintMs: number; nodes: number; elements: number }> {
    const count = (JSON.parse(conversationJson) as ConversationDetail).messages.length;
    let painted: Promise<number>;
    const start = (restoreStarted = performance.now());
    if (target === 'persona-chat') {
      localStorage.setItem(conversationKey, conversationId);
      const el = document.createElement('persona-chat') as PersonaChatElement;
      el.setAttribute('endpoint', endpoint);
      el.setAttribute('mode', 'inline');
      el.style.cssText = `display: block; width: ${size.width}; height: ${size.height}`;
      el.fetch = standIn(conversationJson, (send, close) => onReply?.(send, close));
      const restored = new Promise(resolve =>
        el.addEventListener('persona-chat-conversation', resolve, { once: true }),
      );
      stage().append((element = el));
      await restored;
      painted = paintedWhen(() => el.shadowRoot!.querySelectorAll('.message').length >= count);
    } else if (target === 'deep-chat') {
      const el = document.createElement('deep-chat') as DeepChat;
      el.chatStyle = size;
      // Its documented history property, and a stream handler (connect.handler with stream: true) for the reply.
      el.history = (JSON.parse(conversationJson) as ConversationDetail).messages.map(m => ({
        role: m.role === 'assistant' ? 'ai' : 'user',
        text: m.content,
      }));
      el.connect = { stream: true, handler: (_body, signals) => onDeepChatReply?.(signals) };
      stage().append((element = el));
      painted = paintedWhen(() => (el.shadowRoot?.querySelectorAll('.outer-message-container').length ?? 0) >= count);
    } else {
      const box = document.createElement('div');
      box.style.cssText = `width: ${size.width}; height: ${size.height}; overflow: auto; font: 15px system-ui`;
      if (target === 'divs') {
        for (const message of (JSON.parse(conversationJson) as ConversationDetail).messages) {
          const div = document.createElement('div');
          div.textContent = message.content;
          box.append(div);
        }
      } else {
        box.append(document.createElement('pre'));
      }
      stage().append((element = box));
      painted = afterPaint();
    }
    const renderToPaintMs = (await painted) - start;
    return { renderToPaintMs, ...countNodes(stage()) };
  },

  /** How far the chat's message list is from its end (the newest message), in px. */
  fromEnd(): number {
    const list = scroller();
    return list ? Math.round(list.scrollHeight - list.scrollTop - list.clientHeight) : 0;
  },

  /**
   * Types `count` characters into persona-chat's message box, one at a time: sets the box's value and sends an
   * `input` event, then waits for the element's update and the paint of the next frame. Returns the mean time of a
   * keystroke to its paint.
   */
  async type(count: number): Promise<number> {
    const el = element as PersonaChatElement;
    const box = el.shadowRoot!.querySelector('textarea')!;
    const text = 'how long do returns of boots take, and who pays the shipping? ';
    let total = 0;
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      box.value += text[box.value.length % text.length];
      box.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      await el.updateComplete;
      total += (await afterPaint()) - start;
    }
    return total / count;
  },

  /**
   * Streams the reply's 2,000 deltas, one every 4 ms, into the target, then its sources (which persona-chat lists under
   * it), and waits for the paint of its final state. Returns the time to the last delta (8 s when the page keeps
   * pace), from it to that paint, the main thread's tasks over 50 ms meanwhile, and how often the visitor had to press
   * "New messages" to keep the reply in view. Marks the last delta and that paint for a trace.
   */
  async stream(): Promise<{ feedMs: number; lastDeltaToPaintMs: number; tasksOver50: number; jumps: number }> {
    const tasks = longTasks();
    const started = performance.now();
    let last: number;
    let jumps = 0;
    if (target === 'persona-chat') {
      const el = element as PersonaChatElement;
      let delivered!: Promise<number>;
      onReply = (send, close) => {
        send('meta', { conversationId, key: 'bench', attempt: 1, ping: 15_000 });
        delivered = feed(pieces, text => send('delta', { text }));
        void delivered.then(() => {
          send('citations', { citations: sources });
          send('done', { messageId: 'm-reply', runId: 'r-reply', finishReason: 'stop' });
          close();
        });
      };
      // Sent from the message box, as a visitor sends it, which keeps the list at its end while the reply comes. When
      // the list stops following it all the same, the visitor presses "New messages" (the list's last child then).
      const box = el.shadowRoot!.querySelector('textarea')!;
      const list = scroller()!;
      let following = true;
      const follow = () => {
        if (!following) return;
        const jump = list.lastElementChild;
        if (jump?.classList.contains('jump')) {
          (jump as HTMLElement).click();
          jumps++;
        }
        requestAnimationFrame(follow);
      };
      requestAnimationFrame(follow);
      box.value = question;
      box.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      const replied = new Promise(resolve => el.addEventListener('persona-chat-message', resolve, { once: true }));
      box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, composed: true }));
      await replied;
      following = false;
      await el.updateComplete;
      last = await delivered;
    } else if (target === 'deep-chat') {
      const el = element as DeepChat;
      last = await new Promise<number>(resolve => {
        onDeepChatReply = signals => {
          signals.onOpen();
          let written: Promise<void> = Promise.resolve();
          void feed(pieces, text => (written = signals.onResponse({ text }))).then(async at => {
            await written;
            signals.onClose();
            resolve(at);
          });
        };
        el.submitUserMessage({ text: question });
      });
    } else {
      const text = new Text();
      element!.querySelector('pre')!.append(text);
      last = await feed(pieces, piece => text.appendData(piece));
    }
    // persona-chat: the paint of the first frame that shows the reply as it ends, whole: its text drawn (none of it
    // still busy drawing its pieces), its sources and its actions, whatever task draws them.
    const painted = await (target === 'persona-chat' ? paintedWhen(replyEnded) : afterPaint());
    lastDelta = last;
    // For the bench's trace (element.ts): the tasks from the last delta to that paint.
    performance.mark('bench:last-delta', { startTime: last });
    performance.mark('bench:final-paint', { startTime: painted });
    const [shown, length] = [shownReply().length, pieces.join('').length];
    // A long table or list may still be drawing its pieces: its rows are counted once it is drawn (`drawn()`).
    if (streamed === 'reply' && shown < 0.8 * length) {
      throw new Error(`${target} shows ${shown} characters of a ${length}-character reply`);
    }
    return { feedMs: last - started, lastDeltaToPaintMs: painted - last, tasksOver50: tasks.stop(), jumps };
  },

  /**
   * On the launcher page: gives the undefined element the stand-in backend (the chat picks properties set before it
   * was defined up), and notes the click and the paint of the first frame with the panel open.
   */
  armOpening() {
    const el = document.querySelector('persona-chat') as PersonaChatElement;
    el.fetch = standIn(JSON.stringify(conversation(0)), (_send, close) => close());
    localStorage.setItem(conversationKey, conversationId);
    let clicked = NaN;
    document.addEventListener('click', event => (clicked = event.timeStamp), { capture: true, once: true });
    const opened = new Promise<number>(resolve =>
      el.addEventListener('persona-chat-open', () => void afterPaint().then(resolve), { once: true }),
    );
    this.opened = opened.then(painted => {
      const chunk = performance
        .getEntriesByType('resource')
        .find(entry => entry.name.includes('/persona-chat-define-')) as PerformanceResourceTiming | undefined;
      return { clickToPaintMs: painted - clicked, chunkToPaintMs: chunk ? painted - chunk.responseEnd : NaN };
    });
  },

  /** Once the panel opened: from the click, and from the chat chunk's arrival, to its first paint. */
  opened: undefined as Promise<{ clickToPaintMs: number; chunkToPaintMs: number }> | undefined,
};

export type ElementBench = typeof bench;

if (typeof window !== 'undefined') Object.assign(window, { bench });
