/**
 * @module
 * The copy button of a code block in a reply.
 */
/** The buttons saying "Copied", with the label each had before and the timer that gives it back. */
const copiedButtons = new WeakMap<Element, { label: string; timer: ReturnType<typeof setTimeout> }>();

/**
 * Copies the code of the code block whose copy button is `button`, then says so for `ms`: the button reads
 * `copied`, and so does the block's status, which screen readers read out. Only the data of the button's text node
 * changes, so Lit goes on rendering the button as before. Rejects when the clipboard refuses.
 */
export async function copyCode(button: Element, copied: string, ms = 1500) {
  const block = button.closest('.code');
  const { clipboard } = navigator;
  if (!block || !clipboard) return;
  await clipboard.writeText(block.querySelector('code')?.textContent ?? '');
  const text = [...button.childNodes].find((node): node is Text => node.nodeType === 3 /* a text node */);
  const status = block.querySelector('[role="status"]');
  const shown = copiedButtons.get(button);
  clearTimeout(shown?.timer);
  const label = shown?.label ?? text?.data ?? '';
  const show = (buttonText: string, statusText: string) => {
    if (text) text.data = buttonText;
    if (status) status.textContent = statusText;
  };
  show(copied, copied);
  const timer = setTimeout(() => {
    copiedButtons.delete(button);
    show(label, '');
  }, ms);
  copiedButtons.set(button, { label, timer });
}
