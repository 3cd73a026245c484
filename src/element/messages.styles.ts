/**
 * @module
 * The messages' styles, which the element's stylesheet takes in after the message list's own rule: the bubbles, a
 * reply's markdown (code, tables, footnotes), its sources, its actions and notices, and the typing dots. They read
 * the private `--_*` variables of the launcher's `:host` rule.
 */

/** Marks a stylesheet for the build, which minifies it; the text is kept as written. */
const css = String.raw;

export const messagesCss = css`
  .thanks,
  .given {
    color: var(--_muted);
    font-size: 0.85em;
  }
  .given {
    margin: 6px 0 0;
  }
  .item {
    display: contents;
  }
  .chunk {
    display: flex;
    flex-direction: column;
    gap: 12px;
  }
  /*
   * A long conversation lays out and paints only the chunks of history in view (their size is remembered once
   * seen); one box for 20 messages keeps the browser's work of finding what is in view small on every frame. The
   * two newest chunks are always drawn at their true size, so that scrolling to the end lands at the end.
   */
  .chunk:nth-last-child(n + 3 of .chunk) {
    content-visibility: auto;
    contain-intrinsic-size: auto 1200px;
  }
  .message {
    border: 1px solid transparent;
    max-inline-size: 88%;
    padding: 10px 14px;
    border-radius: var(--_bubble-radius);
    overflow-wrap: anywhere;
  }
  .message.user {
    align-self: flex-end;
    background: var(--_user-bg);
    color: var(--_user-fg);
    border-end-end-radius: 4px;
    white-space: pre-wrap;
  }
  .message.assistant {
    align-self: flex-start;
    background: var(--_surface);
    border-end-start-radius: 4px;
  }
  .message.queued {
    /* Not sent yet: an outline instead of a fill, with the text at full contrast. */
    background: transparent;
    color: var(--_fg);
    border: 1px dashed var(--_link);
  }
  .markdown.plain {
    white-space: pre-wrap;
  }
  .message > :first-child,
  .markdown > :first-child {
    margin-block-start: 0;
  }
  .markdown > :last-child {
    margin-block-end: 0;
  }
  .markdown p,
  .markdown ul,
  .markdown ol,
  .markdown blockquote,
  .markdown .code,
  .markdown .table {
    margin-block: 0.5em;
  }
  .markdown :is(h2, h3, h4, h5, h6) {
    margin-block: 0.7em 0.3em;
    font-size: 1em;
  }
  .markdown ul,
  .markdown ol {
    padding-inline-start: 1.3em;
  }
  .markdown blockquote {
    margin-inline: 0;
    padding-inline-start: 0.8em;
    border-inline-start: 3px solid var(--_border);
    color: var(--_muted);
  }
  .markdown a {
    color: var(--_link);
  }
  .markdown code {
    font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
    font-size: 0.88em;
    background: var(--_bg);
    border-radius: 4px;
    padding: 0.1em 0.3em;
  }
  .markdown .code {
    position: relative;
  }
  .markdown pre {
    margin: 0;
    padding: 10px 12px;
    background: var(--_bg);
    border: 1px solid var(--_border);
    border-radius: 8px;
    overflow-x: auto;
  }
  .markdown pre code {
    padding: 0;
    background: none;
  }
  .markdown .code-bar {
    display: flex;
    justify-content: flex-end;
    margin-block-end: 4px;
  }
  .markdown .copy {
    font-size: 0.75em;
    border: 1px solid var(--_border);
    background: var(--_surface);
    border-radius: 6px;
    padding: 2px 8px;
  }
  .markdown .table {
    overflow-x: auto;
  }
  .markdown table {
    border-collapse: collapse;
    font-size: 0.92em;
  }
  .markdown th,
  .markdown td {
    border: 1px solid var(--_border);
    padding: 4px 8px;
    text-align: start;
  }
  .markdown .align-center {
    text-align: center;
  }
  .markdown .align-right {
    text-align: end;
  }
  .markdown sup.cite a {
    display: inline-block;
    min-inline-size: 1.4em;
    padding: 0 0.3em;
    margin-inline-start: 1px;
    border-radius: 999px;
    background: var(--_accent);
    color: var(--_on-accent);
    font-size: 0.72em;
    line-height: 1.5;
    text-align: center;
    text-decoration: none;
  }

  .citations {
    margin-block-start: 8px;
    padding-block-start: 8px;
    border-block-start: 1px solid var(--_border);
    font-size: 0.88em;
  }
  .citations :is(h2, h3, h4, h5, h6) {
    margin: 0 0 4px;
    font-size: 0.85em;
    color: var(--_muted);
    font-weight: 600;
  }
  .citations ol {
    margin: 0;
    padding-inline-start: 1.4em;
  }
  .citations li {
    margin-block: 2px;
  }
  .citations li.highlight {
    background: color-mix(in srgb, var(--_accent) 15%, transparent);
    border-radius: 4px;
  }
  .citations .source-name {
    padding: 0;
    border: none;
    background: none;
    text-align: start;
  }
  /* Targets of at least 24 px (WCAG 2.2, 2.5.8), though the list's text is smaller. */
  .citations li > :is(button, a) {
    display: inline-flex;
    align-items: center;
    min-block-size: 24px;
  }
  .citations button::before {
    content: '';
    display: inline-block;
    margin-inline-end: 0.4em;
    border: 0.3em solid transparent;
    border-inline-start: 0.45em solid;
    border-inline-end: 0;
  }
  .citations [aria-expanded='true']::before {
    border: 0.3em solid transparent;
    border-block-start: 0.45em solid;
    border-block-end: 0;
  }
  .citations a {
    color: var(--_link);
  }
  .citations blockquote {
    margin: 4px 0;
    padding-inline-start: 8px;
    border-inline-start: 2px solid var(--_border);
    color: var(--_muted);
  }
  .citations .relevance {
    font-size: 0.85em;
    color: var(--_muted);
  }

  .reply-actions {
    display: flex;
    align-items: center;
    gap: 4px;
    margin-block-start: 6px;
  }
  /* As large before its icon is drawn (see reveal() in messages.ts) as after. */
  .reply-actions .icon-button {
    min-inline-size: 28px;
    min-block-size: 28px;
  }
  .reply-actions .icon-button svg {
    inline-size: 16px;
    block-size: 16px;
  }
  /* A vote given is plain to see: the thumb filled. */
  .reply-actions [aria-pressed='true'] {
    color: var(--_link);
  }
  .reply-actions [aria-pressed='true'] svg {
    fill: currentColor;
  }
  .notice {
    color: var(--_error);
    font-size: 0.85em;
    display: flex;
    align-items: center;
    gap: 8px;
    margin-block-start: 6px;
  }
  .reconnecting {
    font-size: 0.85em;
    margin-block: 6px 0;
    opacity: 0.8;
  }
  .text-button {
    border: 1px solid currentColor;
    background: transparent;
    border-radius: 999px;
    padding: 2px 10px;
    font-size: 0.9em;
  }
  .typing {
    display: inline-flex;
    gap: 4px;
    padding-block: 4px;
  }
  .typing span {
    inline-size: 7px;
    block-size: 7px;
    border-radius: 50%;
    background: var(--_muted);
    animation: blink 1.2s infinite ease-in-out;
  }
  .typing span:nth-child(2) {
    animation-delay: 0.2s;
  }
  .typing span:nth-child(3) {
    animation-delay: 0.4s;
  }
  @keyframes blink {
    0%,
    80%,
    100% {
      opacity: 0.3;
    }
    40% {
      opacity: 1;
    }
  }
`;
