// The localize controller on a host of its own: the language it follows, and the table it shows.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { LitElement } from 'lit';
import { LocalizeController } from '../../src/element/localize-controller.js';

class LocalizedHost extends LitElement {
  made = 0;
  readonly localize = new LocalizeController(this, () => void this.made++);
  updates = 0;

  protected override updated() {
    this.updates++;
  }
}
customElements.define('localized-host', LocalizedHost);

const send = (host: LocalizedHost) => host.localize.shown.table?.send ?? 'Send';

describe('LocalizeController', () => {
  afterEach(() => document.documentElement.setAttribute('lang', 'en'));

  it('shows the table of lang on the host, and follows it when it changes', async () => {
    const host = await fixture<LocalizedHost>(html`<localized-host lang="de"></localized-host>`);
    await waitUntil(() => host.localize.shown.language === 'de', 'the German table to be shown');
    expect(send(host)).to.equal('Senden');
    const updates = host.updates;
    host.setAttribute('lang', 'fr');
    host.localize.update();
    await waitUntil(() => host.localize.shown.language === 'fr', 'the French table to be shown');
    await host.updateComplete;
    expect(host.updates).to.be.above(updates, 'the host was asked to update');
  });

  it('takes the nearest [lang] above it, then the document’s, and follows the page when it changes', async () => {
    const wrapper = await fixture(html`<div lang="es"><localized-host></localized-host></div>`);
    const host = wrapper.querySelector('localized-host') as LocalizedHost;
    expect(host.localize.locale).to.equal('es');
    await waitUntil(() => host.localize.shown.language === 'es', 'the Spanish table to be shown');
    wrapper.removeAttribute('lang');
    document.documentElement.setAttribute('lang', 'nl');
    await waitUntil(() => host.localize.shown.language === 'nl', 'the page’s new language to be followed');
  });

  it('shows English for a language it has no table for, and stops following the page once disconnected', async () => {
    const host = await fixture<LocalizedHost>(html`<localized-host lang="sv"></localized-host>`);
    expect(host.localize.shown).to.deep.equal({ language: 'en', table: undefined });
    let followed = 0;
    host.localize.update = () => void followed++;
    document.documentElement.setAttribute('lang', 'de');
    // Mutation records are delivered at the end of the task that made them: by the next frame, at the latest.
    await new Promise(resolve => requestAnimationFrame(resolve));
    expect(followed).to.equal(1, 'followed while connected');
    host.remove();
    document.documentElement.setAttribute('lang', 'fr');
    await new Promise(resolve => requestAnimationFrame(resolve));
    expect(followed).to.equal(1, 'not followed once disconnected');
  });

  it('makes the strings shown from the table, the overrides, the heading and the placeholder, anew only on a change', async () => {
    const host = await fixture<LocalizedHost>(html`<localized-host lang="de"></localized-host>`);
    await waitUntil(() => host.localize.shown.language === 'de', 'the German table to be shown');
    const overrides = { send: 'Los' };
    const made = host.made;
    const strings = host.localize.strings(overrides, 'Shop', '');
    expect([strings.send, strings.heading, strings.stop]).to.deep.equal(['Los', 'Shop', 'Stopp']);
    expect(strings.placeholder, 'no placeholder: the table’s').to.equal('Nachricht eingeben…');
    expect(host.localize.strings(overrides, 'Shop', ''), 'the same object while nothing changed').to.equal(strings);
    expect(host.made).to.equal(made + 1);
    const other = host.localize.strings(overrides, 'Shop', 'Ask us');
    expect([other === strings, other.placeholder]).to.deep.equal([false, 'Ask us']);
    expect(host.made).to.equal(made + 2);
  });
});
