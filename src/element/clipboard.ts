/**
 * @module
 * The copy buttons of a reply: its code blocks', and the reply's own.
 */

/** The buttons saying "Copied", with the label each had before and the timer that gives it back. */
const copiedButtons = new WeakMap<Element, { label: string; timer: ReturnType<typeof setTimeout> }>();

/**
 * Copies the code of the code block whose copy button is `button`, then says so for `ms` (see `copy`). Does nothing
 * for a button outside a code block.
 */
export async function copyCode(button: Element, copied: string, ms?: number) {
  const block = button.closest('.code');
  if (block) await copy(button, block.querySelector('code')?.textContent ?? '', copied, ms);
}

/**
 * Copies `text` (or what it resolves to: a clipboard item is written at once, within the press that allows it, with
 * its text to come), then says so for `ms`: the button reads `copied` (its text, or its label when it is an icon), and so
 * does the status of its code block, which screen readers read out. Only the data of the button's text node or its
 * label changes, so Lit goes on rendering the button as before. Rejects when the clipboard refuses.
 */
export async function copy(button: Element, text: string | Promise<string>, copied: string, ms = 1500) {
  const { clipboard } = navigator;
  if (!clipboard) return;
  await (typeof text == 'string'
    ? clipboard.writeText(text)
    : clipboard.write([
        new ClipboardItem({ 'text/plain': text.then(data => new Blob([data], { type: 'text/plain' })) }),
      ]));
  // Its label's text node; an icon button has none, only the spaces around its icon.
  const node = [...button.childNodes].find(
    (child): child is Text => child.nodeType === 3 && !!(child as Text).data.trim(),
  );
  const status = button.closest('.code')?.querySelector('[role="status"]');
  const shown = copiedButtons.get(button);
  clearTimeout(shown?.timer);
  const label = shown?.label ?? node?.data ?? button.ariaLabel ?? '';
  const show = (buttonText: string, statusText: string) => {
    if (node) node.data = buttonText;
    else button.ariaLabel = buttonText;
    if (status) status.textContent = statusText;
  };
  show(copied, copied);
  const timer = setTimeout(() => {
    copiedButtons.delete(button);
    show(label, '');
  }, ms);
  copiedButtons.set(button, { label, timer });
}
