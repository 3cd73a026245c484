// The copy buttons of a reply: what a code block's copies, and what it and the block's status say after; what an icon
// button says after.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { executeServerCommand } from '@web/test-runner-commands';
import { copy, copyCode } from '../../src/element/clipboard.js';
import { renderMarkdown } from '../../src/element/markdown.js';
import { labels, styled } from './markdown-support.js';

describe('copyCode', () => {
  it('copies a code block, then says so for a while on its button and in its status', async function () {
    // Written here without a visitor's gesture, the clipboard needs a permission that the test runner can grant
    // only in Chromium; the element's test copies by a key press in every engine.
    if (!(await executeServerCommand('grant-clipboard'))) this.skip();
    const { host, root } = styled(renderMarkdown('```sh\nnpm install persona-chat\n```', labels).parts);
    const button = root.querySelector<HTMLButtonElement>('[part="copy-button"]')!;
    const status = root.querySelector('[part="code-block"] [role="status"]')!;
    expect(status.textContent).to.equal('');
    button.focus();
    await copyCode(button, 'Copied', 200);
    expect(await navigator.clipboard.readText()).to.equal('npm install persona-chat');
    expect([button.textContent, status.textContent]).to.deep.equal(['Copied', 'Copied']);
    await copyCode(button, 'Copied', 200);
    await waitUntil(() => button.textContent === 'Copy', 'the button says Copy again');
    expect(status.textContent).to.equal('');
    host.remove();
  });

  it('does nothing for a button outside a code block', async () => {
    const { host, root } = styled(renderMarkdown('Not code, but a [link](https://example.com).', labels).parts);
    const button = document.createElement('button');
    button.textContent = 'Copy';
    root.querySelector('p')!.append(button);
    await copyCode(button, 'Copied');
    expect(button.textContent).to.equal('Copy');
    host.remove();
  });

  it('says Copied on an icon button by its label, then gives its label back', async function () {
    if (!(await executeServerCommand('grant-clipboard'))) this.skip();
    const button = document.createElement('button');
    button.setAttribute('aria-label', 'Copy reply');
    document.body.append(button);
    button.focus();
    await copy(button, 'The reply', 'Copied', 200);
    expect(await navigator.clipboard.readText()).to.equal('The reply');
    expect(button.getAttribute('aria-label')).to.equal('Copied');
    await waitUntil(() => button.getAttribute('aria-label') === 'Copy reply', 'the label comes back');
    button.remove();
  });
});
