/**
 * @module
 * The element's stylesheet: the launcher's rules, then the panel's, the messages' (`messages.styles.ts`) and the
 * composer's, all reading the private `--_*` variables that the launcher's `:host` rule takes from the public
 * `--persona-chat-*` properties.
 */
import { unsafeCSS } from 'lit';
import { launcherCss } from './launcher.styles.js';
import { messagesCss } from './messages.styles.js';

/**
 * Marks a stylesheet for the build, which minifies it, as in the launcher's styles. Lit's own tag of that name
 * checks what is interpolated, and nothing is: without it, the tag and its checks stay out of the bundle.
 */
const css = String.raw;

/** The element's styles: the launcher's, then the panel's, with the messages' in their place in it. */
export const styles = [
  unsafeCSS(launcherCss),
  unsafeCSS(css`
  /* The private variables only the panel uses; the launcher's sheet defines the others. */
  :host {
    --_on-d: oklch(from var(--_brand-d) clamp(0, (0.565 - l) * 1000, 1) 0 0);
    --_accent: light-dark(var(--_brand-l), var(--_brand-d));
    --_on-accent: var(--persona-chat-on-accent-color, light-dark(var(--_on-l), var(--_on-d)));
    --_muted: var(--persona-chat-muted-color, light-dark(#4b5563, #9ca3af));
    --_surface: var(--persona-chat-surface-color, light-dark(#f3f4f6, #1f2937));
    --_user-bg: var(--persona-chat-user-bubble-color, var(--_accent));
    --_user-fg: var(--persona-chat-user-text-color, var(--_on-accent));
    --_bubble-radius: var(--persona-chat-bubble-radius, 14px);
    --_width: var(--persona-chat-panel-width, 380px);
    --_height: var(--persona-chat-panel-height, 600px);
  }
  :host([mode='inline']) {
    block-size: 100%;
  }
  .sr-only {
    position: absolute;
    inline-size: 1px;
    block-size: 1px;
    overflow: hidden;
    clip-path: inset(50%);
    white-space: nowrap;
  }
  .badge {
    position: absolute;
    inset-block-start: -4px;
    inset-inline-end: -4px;
    min-inline-size: 20px;
    padding: 0 6px;
    border-radius: 999px;
    background: #b91c1c;
    color: #fff;
    font-size: 12px;
    line-height: 20px;
    font-weight: 600;
  }
  :host([position='bottom-left']) .panel.floating {
    inset-inline: var(--_offset) auto;
  }
  .panel {
    display: flex;
    flex-direction: column;
    background: var(--_bg);
    color: var(--_fg);
    overflow: hidden;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
  }
  .panel.floating {
    /* A dialog element: none of its own place, margins, padding or limits. */
    inset: auto;
    margin: 0;
    padding: 0;
    max-inline-size: none;
    max-block-size: none;
    position: fixed;
    inset-block-end: calc(var(--_offset) + var(--_launcher-size) + 12px);
    inset-inline-end: var(--_offset);
    z-index: var(--_z);
    inline-size: min(var(--_width), calc(100vw - 2 * var(--_offset)));
    block-size: min(var(--_height), calc(100vh - var(--_launcher-size) - 3 * var(--_offset)));
    box-shadow: var(--_shadow);
    animation: rise 0.18s ease-out;
  }
  .panel.inline {
    block-size: 100%;
    min-block-size: 360px;
  }
  /* Whatever a rule below gives it (the message list is a flex box), hidden is hidden. */
  [hidden] {
    display: none !important;
  }
  @keyframes rise {
    from {
      opacity: 0;
      transform: translateY(8px);
    }
  }
  @media (max-width: 480px) {
    .panel.floating {
      /* The visible width: 100vw would take in the page's scrollbar, and push Send under it. */
      inset: 0;
      inline-size: auto;
      block-size: 100dvh;
      border-radius: 0;
    }
  }

  .header {
    display: flex;
    align-items: center;
    gap: 8px;
    padding: 14px 16px;
    border-block-end: 1px solid var(--_border);
  }
  .header .titles {
    flex: 1;
    min-inline-size: 0;
  }
  .header .titles > :first-child {
    margin: 0;
    font-size: 1.05em;
    font-weight: 600;
  }
  .header p {
    margin: 0;
    color: var(--_muted);
    font-size: 0.85em;
  }
  .icon-button {
    border: none;
    background: transparent;
    border-radius: 8px;
    padding: 6px;
    display: grid;
    place-items: center;
    color: var(--_muted);
  }
  .icon-button:hover {
    background: var(--_surface);
    color: var(--_fg);
  }
  .icon-button svg {
    inline-size: 20px;
    block-size: 20px;
  }

  .messages {
    flex: 1;
    overflow-y: auto;
    padding: 16px;
    display: flex;
    flex-direction: column;
    gap: 12px;
    overscroll-behavior: contain;
    /* It clips what it holds anyway; saying so keeps its paint apart from the message box's, which a keystroke redraws. */
    contain: paint;
  }
  ${messagesCss}

  .error {
    margin: 0 16px 8px;
    padding: 8px 12px;
    border-radius: 8px;
    color: var(--_error);
    background: color-mix(in srgb, var(--_error) 10%, transparent);
    font-size: 0.9em;
  }
  .starters {
    display: flex;
    flex-wrap: wrap;
    gap: 8px;
  }
  .starter {
    border: 1px solid var(--_link);
    background: transparent;
    color: var(--_link);
    border-radius: 999px;
    padding: 6px 12px;
    font-size: 0.9em;
    text-align: start;
  }
  .jump {
    align-self: center;
    position: sticky;
    inset-block-end: 0;
    border: 1px solid var(--_border);
    background: var(--_bg);
    border-radius: 999px;
    padding: 4px 12px;
    font-size: 0.85em;
    box-shadow: 0 2px 8px rgb(0 0 0 / 0.12);
  }

  form {
    display: flex;
    align-items: flex-end;
    gap: 8px;
    padding: 12px;
    border-block-start: 1px solid var(--_border);
  }
  textarea {
    flex: 1;
    resize: none;
    font: inherit;
    color: inherit;
    background: var(--_surface);
    border: 1px solid transparent;
    border-radius: 12px;
    padding: 9px 12px;
    max-block-size: 8.5em;
    field-sizing: content;
    min-block-size: 2.6em;
  }
  ::placeholder {
    color: var(--_muted);
    opacity: 1;
  }
  textarea:focus-visible {
    outline: none;
    border-color: var(--_focus);
  }
  .send {
    /* Transparent borders show in forced colours, where fills are gone. */
    border: 1px solid transparent;
    border-radius: 12px;
    background: var(--_accent);
    color: var(--_on-accent);
    block-size: 2.6em;
    min-inline-size: 2.6em;
    padding-inline: 12px;
    font-weight: 600;
  }
  .send[aria-disabled='true'] {
    opacity: 0.5;
    cursor: default;
  }
  .limit {
    font-size: 0.78em;
    color: var(--_muted);
    padding: 0 14px 6px;
    text-align: end;
  }

  /* Last, so that they win over the rules above. */
  @media (prefers-reduced-motion: reduce) {
    .panel.floating,
    .typing span {
      animation: none;
    }
  }
  /*
   * Forced colours drop fills and custom outlines: keep the focus and the typing dots. Each control's edge is a
   * border (transparent ones included), which forced colours draw; a queued message's stays dashed.
   */
  @media (forced-colors: active) {
    :focus-visible,
    textarea:focus-visible {
      outline: 2px solid Highlight;
    }
    .typing span {
      background: CanvasText;
      forced-color-adjust: none;
    }
  }
  `),
];
