import { expect, fixture, html } from '@open-wc/testing';
import { LitElement } from 'lit';
import { ServiceClient } from '../../src/service/client.js';
import type { StreamChunk } from '../../src/service/types.js';

// The emulator is mounted by web-test-runner.config.mjs at /emulator with this test-only key.
const service = () => new ServiceClient({ baseUrl: `${location.origin}/emulator`, apiKey: 'browser-test-key' });

class SmokeGreeting extends LitElement {
  static override properties = { name: {} };
  name = 'world';
  override render() {
    return html`<p part="greeting">Hello, ${this.name}!</p>`;
  }
}
customElements.define('smoke-greeting', SmokeGreeting);

describe('browser test setup', () => {
  it('renders a Lit element', async () => {
    const el = await fixture<SmokeGreeting>(html`<smoke-greeting name="browser"></smoke-greeting>`);
    expect(el.shadowRoot!.querySelector('p')!.textContent).to.equal('Hello, browser!');
    await expect(el).to.be.accessible();
  });

  it('reaches the real emulator mounted in the test server, streaming a reply word by word', async () => {
    const client = service();
    const personas = await (await fetch('/emulator/__emulator/personas')).json();
    const juniper = personas.data.find((p: { name: string }) => p.name === 'Juniper');
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'browser',
    });
    const chunks: StreamChunk[] = [];
    for await (const chunk of client.streamSse(conversationId, 'How long does shipping take?')) chunks.push(chunk);
    const text = chunks.map(c => (c.type === 'delta' ? c.text : '')).join('');
    expect(chunks.filter(c => c.type === 'delta').length).to.be.greaterThan(10);
    expect(text).to.contain('3 to 5 business days');
    expect(chunks.at(-1)).to.include({ type: 'done', finishReason: 'stop' });
    const stored = await client.getConversation(conversationId);
    expect(stored.chatMessages?.[1]?.content).to.equal(text);
  });
});
