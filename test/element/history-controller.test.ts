// The history controller on a host of its own: where the focus goes as the view's list changes, and what a host
// sees when the view's code cannot be loaded. The view itself is tested through the element (history.test.ts).
import { expect, fixture, html } from '@open-wc/testing';
import { LitElement, html as litHtml } from 'lit';
import { HistoryController } from '../../src/element/history-controller.js';
import type { HistoryList } from '../../src/element/history.js';
import { resolveStrings } from '../../src/element/strings.js';

class HistoryHost extends LitElement {
  failures = 0;
  readonly history = new HistoryController(
    this,
    {
      backend: {
        listConversations: () => Promise.resolve({ data: [], next: null }),
        request: () => Promise.reject(new Error('not asked here')),
      },
      state: { conversationId: null },
      newConversation: () => {},
    },
    {
      open: () => Promise.resolve(),
      strings: () => resolveStrings(undefined),
      say: () => {},
      failed: () => void this.failures++,
    },
  );

  override render() {
    const list = this.history.list;
    return litHtml`${list ? litHtml`<h3 id="history-heading" tabindex="-1">Conversations</h3>` : ''}
      ${
        list?.items.map(
          item =>
            litHtml`<div class="conversation" data-id=${item.id} tabindex="-1">${item.name}</div>
              <button data-delete=${item.id}>Delete</button>`,
        ) ?? ''
      }
      ${list?.renaming ? litHtml`<div class="rename"><input /></div>` : ''}
      ${list?.deleting ? litHtml`<div class="confirm"><button data-cancel>Keep</button></div>` : ''}
      <textarea class="input"></textarea>`;
  }
}
customElements.define('history-host', HistoryHost);

const list = (items: { id: string; name: string }[], more: Partial<HistoryList> = {}) =>
  ({ items, ...more }) as unknown as HistoryList;

describe('HistoryController', () => {
  it('moves the focus into a rename or delete, back to the conversation, to the heading when one goes', async () => {
    const host = await fixture<HistoryHost>(html`<history-host></history-host>`);
    const two = [
      { id: 'a', name: 'Tents' },
      { id: 'b', name: 'Boots' },
    ];
    const step = async (shown: HistoryList | undefined) => {
      host.history.show(shown);
      await host.updateComplete;
      return host.shadowRoot!.activeElement;
    };
    await step(list(two));
    expect((await step(list(two, { renaming: 'a' })))?.matches('.rename input')).to.equal(true);
    expect((await step(list(two)))?.getAttribute('data-id'), 'back to the renamed one').to.equal('a');
    expect((await step(list(two, { deleting: 'b' })))?.hasAttribute('data-cancel')).to.equal(true);
    expect((await step(list(two)))?.getAttribute('data-delete'), 'kept: back to its delete button').to.equal('b');
    expect((await step(list(two.slice(0, 1))))?.id, 'one went: to the heading').to.equal('history-heading');
    expect((await step(undefined))?.className, 'closed: to the message box').to.equal('input');
  });

  it('loads the view on the first toggle and shows its list, and leaves it on the next', async () => {
    const host = await fixture<HistoryHost>(html`<history-host></history-host>`);
    expect(host.history.render(resolveStrings(undefined), 'en', 3)).to.equal(undefined);
    await host.history.toggle();
    expect(host.history.list).to.include({ loading: false, error: '' });
    expect(host.history.render(resolveStrings(undefined), 'en', 3), 'the view is drawn').not.to.equal(undefined);
    await host.history.toggle();
    expect(host.history.list).to.equal(undefined);
    expect(host.failures).to.equal(0);
  });
});
