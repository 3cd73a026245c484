import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';

describe('persona-chat/react on a server', () => {
  it('renders the bare tag, leaving properties and listeners to the browser, and registers nothing', async () => {
    const { PersonaChat } = await import('../src/react/index.js');
    const html = renderToString(
      createElement(PersonaChat, {
        endpoint: '/persona-chat',
        metadata: { page: '/server' },
        onMessage: () => {},
        className: 'help',
        id: 'chat',
      }),
    );
    assert.equal(html, '<persona-chat class="help" id="chat"></persona-chat>');
    assert.ok(typeof globalThis.HTMLElement === 'undefined', 'no HTMLElement is put on the server');
    assert.ok(!globalThis.customElements?.get('persona-chat'), 'the tag is not registered on the server');
  });
});
