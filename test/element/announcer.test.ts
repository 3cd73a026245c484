// The announcer on a host of its own: what its live region says, and when.
import { expect, fixture, html } from '@open-wc/testing';
import { LitElement, html as litHtml } from 'lit';
import { Announcer } from '../../src/element/announcer.js';
import { en } from '../../src/element/strings.js';

class AnnouncingHost extends LitElement {
  reply = '';
  readonly announcer = new Announcer(this, {
    region: () => this.renderRoot.querySelector('.live'),
    list: () => this.renderRoot.querySelector('.list'),
    strings: () => en,
    speaker: () => 'Juniper',
  });

  override render() {
    return litHtml`<div class="live" aria-live="polite"></div>
      <div class="list">
        <div class="item" data-key="t1">
          <div class="markdown">
            <p>${this.reply}<sup class="cite">1</sup></p>
            <button>Copy</button>
          </div>
        </div>
      </div>`;
  }
}
customElements.define('announcing-host', AnnouncingHost);

const live = (host: AnnouncingHost) => host.renderRoot.querySelector('.live')!.textContent;

describe('Announcer', () => {
  it('reads a reply out once it is drawn: who wrote it and its text, without footnote numbers or buttons', async () => {
    const host = await fixture<AnnouncingHost>(html`<announcing-host></announcing-host>`);
    host.reply = 'Tents from   $18 a night.';
    host.announcer.announce('t1');
    expect(live(host)).to.equal('', 'nothing is said before the reply is drawn');
    host.requestUpdate();
    await host.updateComplete;
    expect(live(host)).to.equal(`${en.said('Juniper')} Tents from $18 a night.`);
  });

  it('reads only the first 2,000 characters or so of a long reply, with an ellipsis', async () => {
    const host = await fixture<AnnouncingHost>(html`<announcing-host></announcing-host>`);
    host.reply = 'word '.repeat(1000);
    host.announcer.announce('t1');
    host.requestUpdate();
    await host.updateComplete;
    const said = live(host)!;
    expect(said.startsWith(`${en.said('Juniper')} word word`)).to.equal(true);
    expect(said.endsWith('…')).to.equal(true);
    expect(said.length).to.be.below(2100);
  });

  it('counts the characters left down at a few steps near the limit, not at every keystroke', async () => {
    const host = await fixture<AnnouncingHost>(html`<announcing-host></announcing-host>`);
    const heard: string[] = [];
    const say = (length: number) => {
      const before = live(host);
      host.announcer.countDown(length);
      if (live(host) !== before) heard.push(live(host)!);
    };
    // 200 left, then each step down; the steps between say nothing; back under the limit, it counts again.
    for (const length of [10, 3790, 3800, 3801, 3850, 3900, 3950, 3960, 3980, 3990, 3995, 4000, 4200, 3700, 3800]) {
      say(length);
    }
    expect(heard).to.deep.equal([
      en.charactersLeft(200),
      en.charactersLeft(100),
      en.charactersLeft(50),
      en.charactersLeft(20),
      en.charactersLeft(10),
      en.charactersLeft(0),
      en.charactersLeft(200),
    ]);
  });
});
