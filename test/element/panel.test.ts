// The panel's templates drawn on their own, from a view written here: what each part shows and what its controls
// call. The element's suites draw the same through the whole element.
import { expect } from '@open-wc/testing';
import { nothing, render } from 'lit';
import { renderPanel } from '../../src/element/panel.js';
import type { PanelActions, PanelHost, PanelView } from '../../src/element/panel.js';
import { initialState } from '../../src/element/state.js';
import type { ChatState, HistoryItem } from '../../src/element/state.js';
import { en } from '../../src/element/strings.js';

/**
 * A host and a view with every control recording its call, changed by `more` (the host's properties among them);
 * drawn into a fresh container.
 */
function draw(more: Partial<PanelView> & Partial<Omit<PanelHost, 'toggle' | 'hide' | 'send' | 'requestUpdate'>> = {}) {
  const calls: [string, ...unknown[]][] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) =>
      void calls.push([
        name,
        // What was typed, for an input; the strings a control was called with otherwise.
        ...args
          .map(arg => (arg instanceof Event && arg.type === 'input' ? (arg.target as HTMLTextAreaElement).value : arg))
          .filter(arg => typeof arg === 'string'),
      ]);
  const on = new Proxy({} as PanelActions, { get: (_, name: string) => record(name) });
  const { open = true, subheading = '', greeting = '', starters = [], noHistory = false, endpoint = '/chat' } = more;
  const host: PanelHost = {
    open,
    subheading,
    greeting,
    starters,
    noHistory,
    endpoint,
    toggle: async () => record('toggle')(),
    hide: async () => record('hide')(),
    send: async (text: string) => record('send')(text),
    requestUpdate: () => {},
  };
  const view: PanelView = {
    strings: en,
    context: {
      strings: en,
      speaker: 'Juniper',
      locale: 'en',
      actions: { retry: () => {}, feedback: () => {} },
      commenting: null,
      thanked: null,
      headingLevel: 3,
    },
    state: initialState,
    inline: false,
    unread: 0,
    language: 'en',
    dir: nothing,
    level: 2,
    history: undefined,
    draft: '',
    pinned: true,
    error: '',
    busy: false,
    retryable: undefined,
    on,
    ...more,
  };
  const root = document.createElement('div');
  render(renderPanel(host, view), root);
  const find = <T extends Element = HTMLElement>(selector: string) => root.querySelector<T>(selector);
  return { root, find, calls };
}

const history = (count: number): ChatState => ({
  ...initialState,
  conversationId: 'c1',
  history: Array.from({ length: count }, (_, i): HistoryItem => ({
    id: `h${i}`,
    messageId: `m${i}`,
    role: i % 2 ? 'assistant' : 'user',
    text: `Message ${i}`,
    citations: [],
    createdAt: null,
  })),
});

describe('the panel templates', () => {
  it('draw a launcher that says what it does and counts unread replies, and a floating dialog', () => {
    const closed = draw({ open: false, unread: 2 });
    expect(closed.find('.launcher')!.getAttribute('aria-label')).to.equal(`${en.open}: ${en.unread(2)}`);
    expect(closed.find('[part="unread-badge"]')!.textContent).to.equal('2');
    expect(closed.find('dialog')!.hidden).to.equal(true);
    const open = draw({ open: true, unread: 2 });
    expect(open.find('.launcher')!.getAttribute('aria-label')).to.equal(en.close);
    expect(open.find('.launcher')!.getAttribute('aria-expanded')).to.equal('true');
    expect(open.find('[part="unread-badge"]')).to.equal(null);
    expect(open.find('dialog')!.hidden).to.equal(false);
  });

  it('draw an inline panel as a section, without a launcher or a close button', () => {
    const { find } = draw({ inline: true, language: 'fr', dir: 'ltr' });
    expect(find('.launcher')).to.equal(null);
    const section = find('section#panel')!;
    expect([section.lang, section.dir, section.getAttribute('aria-label')]).to.deep.equal(['fr', 'ltr', en.heading]);
    expect(find(`.header [aria-label="${en.close}"]`)).to.equal(null);
  });

  it('keep the greeting at the top, offer the starters in an empty conversation only, and send a starter when pressed', () => {
    const empty = draw({ greeting: 'Hi, I am Juniper.', starters: ['Do you rent tents?'] });
    expect(empty.find('.message.assistant')!.textContent).to.equal('Hi, I am Juniper.');
    empty.find<HTMLButtonElement>('.starter')!.click();
    // The press reaches the message list's click delegation too, as any click in the list does.
    expect(empty.calls).to.deep.equal([['send', 'Do you rent tents?'], ['click']]);
    const started = draw({ greeting: 'Hi, I am Juniper.', starters: ['Do you rent tents?'], state: history(2) });
    expect(started.find('.starters')).to.equal(null);
    const first = started.find('.messages')!.firstElementChild!;
    expect([first.className, first.textContent], 'the greeting stays first').to.deep.equal([
      'message assistant',
      'Hi, I am Juniper.',
    ]);
  });

  it('let each message and the message box take the direction of their own text', () => {
    const greeting = 'مرحبا! كيف يمكنني المساعدة؟';
    const { root, find } = draw({ inline: true, language: 'ar', dir: 'rtl', greeting, state: history(2) });
    document.body.append(root);
    try {
      const direction = (el: Element) => getComputedStyle(el).direction;
      expect(direction(find('section#panel')!)).to.equal('rtl');
      expect([...root.querySelectorAll('.message')].map(direction), 'the greeting, then two in English').to.deep.equal([
        'rtl',
        'ltr',
        'ltr',
      ]);
      expect(direction(find('textarea')!), 'the empty message box: the panel’s').to.equal('rtl');
    } finally {
      root.remove();
    }
    const typed = draw({ inline: true, language: 'ar', dir: 'rtl', draft: 'Do you rent tents?' });
    document.body.append(typed.root);
    try {
      expect(getComputedStyle(typed.find('textarea')!).direction, 'typed in: its text’s').to.equal('ltr');
    } finally {
      typed.root.remove();
    }
  });

  it('draw the history in chunks of twenty messages', () => {
    const { root } = draw({ state: history(45) });
    expect([...root.querySelectorAll('.chunk')].map(chunk => chunk.querySelectorAll('.item').length)).to.deep.equal([
      20, 20, 5,
    ]);
  });

  it('make the send button Stop while a turn is answered, and disabled while there is nothing to send', () => {
    const idle = draw();
    expect(idle.find('.send')!.textContent).to.equal(en.send);
    expect(idle.find('.send')!.getAttribute('aria-disabled')).to.equal('true');
    expect(draw({ draft: 'Hello' }).find('.send')!.getAttribute('aria-disabled')).to.equal('false');
    const busy = draw({ busy: true });
    expect(busy.find('.send')!.textContent).to.equal(en.stop);
    expect(busy.find('.send')!.getAttribute('aria-disabled')).to.equal('false');
  });

  it('count the characters left near the limit only', () => {
    expect(draw({ draft: 'x'.repeat(3700) }).find('.limit')).to.equal(null);
    expect(draw({ draft: 'x'.repeat(3900) }).find('.limit')!.textContent).to.equal(en.charactersLeft(100));
    expect(draw({ draft: 'x'.repeat(4100) }).find('.limit')!.textContent).to.equal(en.charactersLeft(0));
  });

  it('show the error, or that the element has no endpoint', () => {
    const errors = (view: Parameters<typeof draw>[0]) => [...draw(view).root.querySelectorAll('[part="error"]')];
    expect(errors({}).length).to.equal(0);
    expect(errors({ endpoint: '' }).map(e => e.textContent)).to.deep.equal([en.errorConfig]);
    expect(errors({ endpoint: '', error: en.errorNetwork }).map(e => e.textContent)).to.deep.equal([en.errorNetwork]);
    expect(errors({ error: en.errorBusy })[0]!.getAttribute('role')).to.equal('alert');
  });

  it('hide the messages and the composer behind the history view, and press its button', () => {
    const { find, root } = draw({ history: 'the history view' });
    expect(root.textContent).to.contain('the history view');
    expect(find('.messages')!.hidden).to.equal(true);
    expect(find('form')!.hidden).to.equal(true);
    expect(find('[part="history-button"]')!.getAttribute('aria-pressed')).to.equal('true');
    expect(draw({ noHistory: true }).find('[part="history-button"]')).to.equal(null);
  });

  it('call the controls: history, new conversation, close, typing and submitting', () => {
    const { find, calls } = draw({ draft: 'Hello' });
    find<HTMLButtonElement>('[part="history-button"]')!.click();
    find<HTMLButtonElement>(`[aria-label="${en.newConversation}"]`)!.click();
    find<HTMLButtonElement>(`.header [aria-label="${en.close}"]`)!.click();
    const input = find<HTMLTextAreaElement>('textarea')!;
    expect(input.value).to.equal('Hello');
    input.value = 'Hello there';
    input.dispatchEvent(new Event('input'));
    find('form')!.dispatchEvent(new Event('submit', { cancelable: true }));
    expect(calls).to.deep.equal([
      ['toggleHistory'],
      ['newConversation'],
      ['hide'],
      ['input', 'Hello there'],
      ['submit'],
    ]);
  });
});
