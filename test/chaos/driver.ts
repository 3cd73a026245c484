/**
 * A visitor in Chromium: one conversation in a page of its own, through the real element. It types each message
 * into the composer and presses Send, waits on the element's state (a turn's `data-status`, `:state(streaming)`,
 * and the `persona-chat-message` / `persona-chat-error` events that end each attempt), clicks Retry when a turn
 * shows it, and in the end reads what the page shows from the element's shadow root.
 */
import type { Browser, Page } from 'playwright-core';

export const terminal = ['done', 'stopped', 'failed', 'interrupted'];

/** How long a turn may take, from its send or its Retry, before it counts as hung. */
export const hangAfterMs = 60_000;

/** How often a wait reads the page's state: every frame would cost six pages more than two cores have. */
const polling = 50;

/** Retries clicked on one turn at most; a turn that still shows Retry then is left as it is. */
const maxRetries = 3;

export interface TurnRecord {
  conversation: number;
  index: number;
  text: string;
  sentAt: number;
  endedAt: number;
  retries: number;
  hung: boolean;
  /** Its final status on screen; null when the turn is not shown (its text went back to the composer). */
  status: string | null;
  /** The reply's text as drawn, without footnote numbers or buttons. */
  shown: string;
  /** The footnote numbers drawn in the reply. */
  footnotes: number;
  /** How each attempt ended, in order: `done`, or the error code the element reported. */
  attempts: string[];
  retryShown: boolean;
  inComposer: boolean;
}

export interface ConversationRecord {
  n: number;
  /** The conversations the page said it was in (more than one when the first was gone and another was started). */
  conversationIds: string[];
  turns: TurnRecord[];
  /** Errors the page logged, for the report. */
  pageErrors: string[];
}

/** What the page shows, read through the element's shadow root. */
export interface Look {
  turns: { text: string; status: string; shown: string; footnotes: number; retry: boolean }[];
  input: string;
}

// Page functions: tsx keeps function names with a helper (__name) that the page lacks; the init script defines it.
const init = `
  globalThis.__name = f => f;
  globalThis.__chaos = { settled: 0, log: [], conversations: [] };
  addEventListener('persona-chat-message', () => __chaos.log.push('done') && __chaos.settled++);
  addEventListener('persona-chat-error', e => __chaos.log.push(e.code) && __chaos.settled++);
  addEventListener('persona-chat-conversation', e => {
    const id = e.conversationId ?? e.detail?.conversationId;
    if (id && !__chaos.conversations.includes(id)) __chaos.conversations.push(id);
  });
`;

declare global {
  interface Window {
    __chaos: { settled: number; log: string[]; conversations: string[] };
  }
}

const look = (page: Page): Promise<Look> =>
  page.evaluate(() => {
    const root = document.querySelector('persona-chat')!.shadowRoot!;
    return {
      turns: [...root.querySelectorAll<HTMLElement>('.item[data-status]')].map(item => {
        const markdown = item.querySelector('.message.assistant .markdown');
        const copy = markdown?.cloneNode(true) as Element | undefined;
        copy?.querySelectorAll('sup.cite, button').forEach(node => node.remove());
        return {
          text: item.querySelector('.message.user')?.textContent?.trim() ?? '',
          status: item.dataset.status!,
          shown: copy?.textContent ?? '',
          footnotes: markdown?.querySelectorAll('sup.cite').length ?? 0,
          retry: Boolean(item.querySelector('[part="retry-button"]')),
        };
      }),
      input: root.querySelector('textarea')?.value ?? '',
    };
  });

const settledCount = (page: Page) => page.evaluate(() => window.__chaos.settled);

/**
 * Waits until the turn of `text` ended an attempt: an attempt-ending event came after `before`, and the turn shows a
 * terminal status (or is gone: its text was given back). Null when it did not by `deadline`.
 */
async function settle(page: Page, text: string, before: number, deadline: number) {
  const handle = await page
    .waitForFunction(
      ({ text, before, terminal }) => {
        const root = document.querySelector('persona-chat')?.shadowRoot;
        const item = [...(root?.querySelectorAll<HTMLElement>('.item[data-status]') ?? [])].find(
          item => item.querySelector('.message.user')?.textContent?.trim() === text,
        );
        if (window.__chaos.settled <= before) return false;
        if (!item) return { status: null, retry: false, ended: window.__chaos.log.slice(before) };
        if (!terminal.includes(item.dataset.status!)) return false;
        return {
          status: item.dataset.status!,
          retry: Boolean(item.querySelector('[part="retry-button"]')),
          ended: window.__chaos.log.slice(before),
        };
      },
      { text, before, terminal },
      { timeout: Math.max(1, deadline - Date.now()), polling },
    )
    .catch(() => null);
  return (await handle?.jsonValue()) as { status: string | null; retry: boolean; ended: string[] } | null;
}

/** Waits until the turn of `text` streams written text (true), or ends first (false). */
export async function streaming(page: Page, text: string) {
  const handle = await page
    .waitForFunction(
      ({ text, terminal }) => {
        const el = document.querySelector('persona-chat');
        const item = [...(el?.shadowRoot?.querySelectorAll<HTMLElement>('.item[data-status]') ?? [])].find(
          item => item.querySelector('.message.user')?.textContent?.trim() === text,
        );
        if (!el || !item) return false;
        if (terminal.includes(item.dataset.status!)) return 'ended';
        const writing = el.matches(':state(streaming)') && item.dataset.status === 'streaming';
        return writing && item.querySelector('.message.assistant .markdown') ? 'writing' : false;
      },
      { text, terminal },
      { timeout: hangAfterMs, polling },
    )
    .catch(() => null);
  return (await handle?.jsonValue()) === 'writing';
}

export interface Visit {
  browser: Browser;
  origin: string;
  n: number;
  /** The messages, in order. */
  texts: string[];
  /**
   * Called once the message `index` is sent, with the page; what it returns is awaited before the next message
   * (a fault and its recovery).
   */
  onSent?: (index: number, page: Page, conversationId: () => Promise<string | undefined>) => Promise<void> | undefined;
  /** Called before message `index` is typed. */
  beforeSend?: (index: number) => Promise<void> | void;
}

/** One visitor's conversation, from the page's load to what it shows in the end. */
export async function converse({ browser, origin, n, texts, onSent, beforeSend }: Visit): Promise<ConversationRecord> {
  const context = await browser.newContext();
  await context.addInitScript({ content: init });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', error => pageErrors.push(String(error)));
  page.on('console', message => message.type() === 'error' && pageErrors.push(message.text()));
  const turns: TurnRecord[] = [];
  const conversationId = async () => (await page.evaluate(() => window.__chaos.conversations)).at(-1);
  try {
    await page.goto(origin);
    await page.waitForFunction(() => document.querySelector('persona-chat')?.shadowRoot?.querySelector('textarea'));
    for (const [index, text] of texts.entries()) {
      await beforeSend?.(index);
      const turn: TurnRecord = {
        conversation: n,
        index,
        text,
        sentAt: Date.now(),
        endedAt: 0,
        retries: 0,
        hung: false,
        status: null,
        shown: '',
        footnotes: 0,
        attempts: [],
        retryShown: false,
        inComposer: false,
      };
      turns.push(turn);
      const before = await settledCount(page);
      await page.locator('persona-chat textarea').fill(text);
      await page.locator('persona-chat [part="send-button"]').click();
      const fault = onSent?.(index, page, conversationId);
      let outcome = await settle(page, text, before, turn.sentAt + hangAfterMs);
      turn.attempts.push(...(outcome?.ended ?? ['hung']));
      for (let gone = 0; outcome?.retry && turn.retries < maxRetries && gone < 3;) {
        // Clicked in the page, where the button is or is not: an action of the driver's that timed out on a starved
        // machine may have clicked all the same.
        const at = await page.evaluate(() => {
          const retry = document
            .querySelector('persona-chat')
            ?.shadowRoot?.querySelector<HTMLButtonElement>('[part="retry-button"]');
          if (!retry) return null;
          const settled = window.__chaos.settled;
          retry.click();
          return settled;
        });
        if (at === null) {
          // The Retry went away: the turn went on by itself. It is read again as it stands.
          gone++;
          turn.attempts.push('(Retry gone)');
          outcome = await settle(page, text, -1, Date.now() + hangAfterMs);
          continue;
        }
        turn.retries++;
        outcome = await settle(page, text, at, Date.now() + hangAfterMs);
        turn.attempts.push(...(outcome?.ended ?? ['hung']));
      }
      await fault;
      turn.endedAt = Date.now();
      if (!outcome) turn.hung = true;
      // A turn that did not end well holds the queue: the visitor stops there.
      if (outcome?.status !== 'done') break;
    }
    const shown = await look(page);
    for (const turn of turns) {
      const on = shown.turns.find(t => t.text === turn.text);
      turn.status = on?.status ?? null;
      turn.shown = on?.shown ?? '';
      turn.footnotes = on?.footnotes ?? 0;
      turn.retryShown = on?.retry ?? false;
      turn.inComposer = shown.input.includes(turn.text);
    }
    return { n, conversationIds: await page.evaluate(() => window.__chaos.conversations), turns, pageErrors };
  } finally {
    await context.close();
  }
}
