// The panel controller on a host of its own: the dialog it shows and hides, modal or not, and where it puts the
// focus. The element's suites (a11y, persona-chat) check the same through the whole element.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { LitElement, html as litHtml } from 'lit';
import { setViewport } from '@web/test-runner-commands';
import { PanelController } from '../../src/element/panel-controller.js';

class PanelHost extends LitElement {
  static override properties = { open: { type: Boolean }, commenting: {} };
  open = false;
  commenting: string | null = null;
  readonly panel = new PanelController(this);

  protected override createRenderRoot() {
    this.panel.adopt(this.shadowRoot);
    return super.createRenderRoot();
  }

  override render() {
    return litHtml`<button class="launcher">Chat</button>
      <dialog>
        <div class="item" data-key="t1"><button aria-pressed=${this.commenting ? 'false' : 'true'}>Down</button></div>
        ${this.commenting ? litHtml`<div class="comment"><textarea></textarea></div>` : ''}
        <textarea class="input"></textarea>
      </dialog>`;
  }

  protected override updated(changed: Map<PropertyKey, unknown>) {
    this.panel.refocus(changed, this.commenting);
  }
}
customElements.define('panel-host', PanelHost);

const dialog = (host: PanelHost) => host.renderRoot.querySelector('dialog')!;
const focused = (host: PanelHost) => host.shadowRoot!.activeElement;

describe('PanelController', () => {
  it('shows the dialog beside the page while the host is open, and closes it when it is not', async () => {
    // The suite's files share one window in WebKit: it is made wide here, whatever a file before left it at, and
    // media queries follow a new size at a later frame.
    await setViewport({ width: 800, height: 600 }).catch(() => {});
    await waitUntil(() => !matchMedia('(max-width: 480px)').matches, 'the viewport is wide');
    const host = await fixture<PanelHost>(html`<panel-host></panel-host>`);
    expect(dialog(host).open).to.equal(false);
    host.open = true;
    await host.updateComplete;
    expect(dialog(host).open).to.equal(true);
    expect(dialog(host).matches(':modal'), 'a wide viewport: beside the page').to.equal(false);
    host.open = false;
    await host.updateComplete;
    expect(dialog(host).open).to.equal(false);
  });

  it('makes the open dialog modal when the viewport becomes narrow, and not when it widens again', async function () {
    const host = await fixture<PanelHost>(html`<panel-host open></panel-host>`);
    try {
      // WebKit's MiniBrowser keeps its window at least 447 px wide: 460 px is still below the 480 px breakpoint.
      await setViewport({ width: 460, height: 640 }).catch(() => this.skip());
      await waitUntil(() => dialog(host).matches(':modal'), 'modal once narrow, without an update of the host');
      await setViewport({ width: 800, height: 600 });
      await waitUntil(() => !dialog(host).matches(':modal') && dialog(host).open, 'beside the page once wide');
    } finally {
      await setViewport({ width: 800, height: 600 }).catch(() => {});
    }
  });

  it('gives the focus back to the launcher once the panel is closed', async () => {
    const host = await fixture<PanelHost>(html`<panel-host open></panel-host>`);
    host.renderRoot.querySelector<HTMLElement>('.input')!.focus();
    host.open = false;
    await host.panel.closed();
    expect(focused(host)?.className).to.equal('launcher');
  });

  it('keeps the focus on a launcher drawn in the root before it, on the launcher it draws instead', async () => {
    // A tag not defined yet, as the launcher script finds it: it draws in the element's root while the chat loads.
    const element = document.createElement('panel-host-late');
    const root = element.attachShadow({ mode: 'open' });
    root.innerHTML = '<button>Loading chat</button>';
    document.body.append(element);
    try {
      root.querySelector('button')!.focus();
      customElements.define('panel-host-late', class extends PanelHost {});
      await (element as PanelHost).updateComplete;
      expect(root.querySelectorAll('button.launcher')).to.have.length(1);
      expect(root.textContent).not.to.contain('Loading chat');
      expect(root.activeElement?.className).to.equal('launcher');
    } finally {
      element.remove();
    }
  });

  it('puts the focus in a comment box that opens, and back on the thumb when it closes', async () => {
    const host = await fixture<PanelHost>(html`<panel-host open></panel-host>`);
    host.commenting = 't1';
    await host.updateComplete;
    expect(focused(host)?.matches('.comment textarea')).to.equal(true);
    host.commenting = null;
    await host.updateComplete;
    expect(focused(host)?.getAttribute('aria-pressed')).to.equal('true');
  });
});
