/**
 * @module
 * The comment box a thumbs-down opens under its reply. A chunk of its own, loaded on the first thumbs-down: most
 * visitors never open one. It takes Lit's `html` from the element rather than importing Lit, so that Lit stays in
 * the element's one file.
 */
import type { html as litHtml } from 'lit';
import type { Strings } from './strings.js';

/** The box's own styles, added to the element's when the chunk loads (written small: they ship as they are). */
const styles =
  '.comment{display:flex;gap:6px;align-items:flex-end;margin-block-start:6px}.comment textarea{font-size:.9em;padding:6px 8px;border:1px solid var(--_border);border-radius:8px;background:var(--_bg);resize:vertical}';

/** Adds the box's styles to the element's shadow root. */
export function style(root: ShadowRoot) {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(styles);
  root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/**
 * A field the visitor types in takes the direction of its text (`dir="auto"`) once it has some; empty, it keeps the
 * panel's, which an empty `dir="auto"` would lose to left-to-right.
 */
const followText = (event: Event) => {
  const field = event.target as HTMLTextAreaElement;
  field.dir = field.value.trim() ? 'auto' : '';
};

/**
 * The box, in `strings`: `send` is given the comment sent (trimmed), or '' when the box is left with Escape (the
 * thumbs-down is kept without a comment, and the panel stays open).
 */
export const commentForm = (html: typeof litHtml, strings: Strings, send: (comment: string) => void) =>
  html`<form
    class="comment"
    @submit=${(event: Event) => {
      event.preventDefault();
      send(((event.target as HTMLFormElement).elements.namedItem('comment') as HTMLTextAreaElement).value.trim());
    }}
    @keydown=${(event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      event.stopPropagation();
      send('');
    }}
  >
    <textarea name="comment" rows="2" @input=${followText} maxlength="1000" aria-label=${strings.feedbackPrompt} placeholder=${strings.feedbackPrompt}></textarea>
    <button type="submit" class="text-button">${strings.feedbackSend}</button>
  </form>`;
