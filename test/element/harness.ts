// What the element tests share: a harness hiding shadow-DOM queries, waits on the element's state, and the test
// server's support routes (the emulator's faults and the continue requests it saw).
import { fixture, html, oneEvent as oneCustomEvent } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import '../../src/element/define.js';
import type { PersonaChat } from '../../src/element/persona-chat.js';

// The backend is mounted at /persona-chat by web-test-runner.config.mjs, with the emulator behind it.
export const juniper = '3e913ded-bf6d-4591-85bb-a2d9be56efd6';
export const ada = 'd8357ade-fff8-4bd3-9194-fa5b172b45f8';

/** The next event of that name, typed as the element's event class. */
export const oneEvent = <K extends keyof GlobalEventHandlersEventMap>(el: EventTarget, name: K) =>
  oneCustomEvent(el, name) as unknown as Promise<GlobalEventHandlersEventMap[K]>;

/** A continue request the emulator received: its message, and whether the backend gave up on it. */
export type Continue = { path: string; message: string; aborted: boolean; completed: boolean };
export const continues = async (): Promise<Continue[]> => (await fetch('/test-support/continues')).json();

/**
 * Waits until the service saw its first reply request end before the reply did (a stop, a new conversation). On a
 * loaded machine, with three engines side by side, that can take a few seconds.
 */
export const upstreamEnded = (what: string) =>
  waitUntil(async () => (await continues())[0]?.aborted, what, { timeout: 10_000 });

export const faults = (body: unknown) =>
  fetch('/emulator/__emulator/faults', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** The conversation as the emulator stores it (a test-only key: the product never puts one in a browser). */
export const stored = async (conversationId: string) =>
  (await (
    await fetch(`/emulator/conversations/${conversationId}`, { headers: { 'x-svc-api-key': 'browser-test-key' } })
  ).json()) as {
    chatMessages: { role: string; content: string }[];
    externalUserId: string;
    conversationName?: string;
    conversationStatus?: string;
    metadata?: Record<string, unknown>;
  };

/** Resets the emulator's faults and the record of continue requests, and forgets browser storage. */
export async function resetAll() {
  sessionStorage.clear();
  localStorage.clear();
  await fetch('/test-support/reset', { method: 'POST' });
}

/** Hides the shadow-DOM queries of the tests, and waits on the element's state. */
export class Harness {
  constructor(readonly el: PersonaChat) {}
  get root() {
    return this.el.shadowRoot!;
  }
  get input() {
    return this.root.querySelector('textarea')!;
  }
  get sendButton() {
    return this.root.querySelector<HTMLButtonElement>('[part="send-button"]')!;
  }
  get retryButton() {
    return this.root.querySelector<HTMLButtonElement>('[part="retry-button"]');
  }
  replies() {
    return [...this.root.querySelectorAll<HTMLElement>('.message.assistant')];
  }
  lastReply() {
    return this.replies().at(-1);
  }
  userMessages() {
    return [...this.root.querySelectorAll<HTMLElement>('.message.user')].map(m => m.textContent);
  }
  /** The statuses of the turns, oldest first. */
  statuses() {
    return [...this.root.querySelectorAll<HTMLElement>('.item[data-status]')].map(item => item.dataset.status);
  }
  async type(text: string) {
    this.input.value = text;
    this.input.dispatchEvent(new Event('input'));
    await this.el.updateComplete;
  }
  async press(key: string, init: KeyboardEventInit = {}) {
    this.input.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, composed: true, ...init }));
    await this.el.updateComplete;
  }
  /** Waits until the current turn has this status (the `turn-status` attribute). */
  async status(status: string, timeout = 12_000) {
    await waitUntil(() => this.el.getAttribute('turn-status') === status, `turn-status="${status}"`, { timeout });
    await this.el.updateComplete;
  }
  /** Waits until the current turn's reply shows written text (a markdown block, not the typing dots). */
  async writing(timeout = 12_000) {
    await waitUntil(
      () => this.el.getAttribute('turn-status') === 'streaming' && this.lastReply()?.querySelector('.markdown'),
      'the reply is being written',
      { timeout },
    );
  }
  /** Waits until a turn shows that it is reconnecting (its connection being made again), not an error. */
  async reconnecting(timeout = 12_000) {
    await waitUntil(() => this.root.querySelector('.item[data-reconnecting]'), 'a turn is reconnecting', { timeout });
  }
  /** Waits until the current turn ended, one way or another. */
  async settled(timeout = 12_000) {
    await this.el.updateComplete;
    await waitUntil(
      () => ['done', 'stopped', 'failed', 'interrupted'].includes(this.el.getAttribute('turn-status') ?? ''),
      'the reply did not end',
      { timeout },
    );
    await this.el.updateComplete;
  }
}

export async function chat(
  attributes = html`<persona-chat
    endpoint="/persona-chat"
    mode="inline"
    storage="session"
    persona-id=${juniper}
  ></persona-chat>`,
) {
  const el = await fixture<PersonaChat>(attributes);
  return new Harness(el);
}
