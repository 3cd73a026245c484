/**
 * @module
 * The copy buttons of a reply: its code blocks', and the reply's own (its text as markdown, with its sources).
 */
import type { Citation } from '../protocol.js';
import type { Strings } from './strings.js';

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
 * Copies `text`, then says so for `ms`: the button reads `copied` (its text, or its label when it is an icon), and so
 * does the status of its code block, which screen readers read out. Only the data of the button's text node or its
 * label changes, so Lit goes on rendering the button as before. Rejects when the clipboard refuses.
 */
export async function copy(button: Element, text: string, copied: string, ms = 1500) {
  const { clipboard } = navigator;
  if (!clipboard) return;
  await clipboard.writeText(text);
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

/**
 * A reply as markdown: its text, then its sources under `t.sources`, numbered as its markers number them (`[2]` is
 * the second), each named as the Sources list names it, and a link where it has a web address.
 */
export function replyMarkdown(text: string, citations: Citation[], t: Pick<Strings, 'sources' | 'source'>): string {
  const list = citations.map((c, i) => {
    const url = c.sourceUrl?.match(/^https?:\/\//i) && c.sourceUrl;
    const name = c.sourceName || c.documentId || c.sourceUrl || t.source(i + 1);
    return `${i + 1}. ${url ? `[${name.replace(/[[\]]/g, '\\$&')}](<${url}>)` : name}`;
  });
  return list.length ? `${text}\n\n${t.sources}:\n\n${list.join('\n')}` : text;
}
