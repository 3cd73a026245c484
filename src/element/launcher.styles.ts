/**
 * @module
 * The launcher's styles, which come first in the element's: the launcher script draws the launcher with them before
 * the chat (and Lit) is loaded, so this is a plain string. Its `:host` rule defines the private variables the
 * launcher needs; the element's sheet defines the rest. Public `--persona-chat-*` properties are read once on
 * :host into private `--_*` variables, which the rest of the sheet uses. Logical properties throughout, so
 * `dir="rtl"` mirrors the layout.
 */

/** Marks a stylesheet for the build, which minifies it; the text is kept as written. */
const css = String.raw;

export const launcherCss = css`
  :host {
    color-scheme: light dark;
    /*
     * One accent serves both schemes: as a fill (launcher, Send, the visitor's bubbles, footnotes) with black or white
     * on it, whichever reaches 4.5:1 (by its OKLCH lightness), and as text and focus rings (links, starters) made
     * darker on light and lighter on dark until it reaches 4.5:1 there too.
     */
    --_brand-l: var(--persona-chat-accent-color, #4f46e5);
    --_brand-d: var(--persona-chat-accent-color, #818cf8);
    --_on-l: oklch(from var(--_brand-l) clamp(0, (0.565 - l) * 1000, 1) 0 0);
    --_link: light-dark(oklch(from var(--_brand-l) min(l, 0.45) c h), oklch(from var(--_brand-d) max(l, 0.8) c h));
    --_bg: var(--persona-chat-background-color, light-dark(#ffffff, #111827));
    --_fg: var(--persona-chat-text-color, light-dark(#1f2937, #f3f4f6));
    --_border: var(--persona-chat-border-color, light-dark(#e5e7eb, #374151));
    --_error: var(--persona-chat-error-color, light-dark(#b91c1c, #fca5a5));
    --_font: var(--persona-chat-font-family, system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif);
    --_font-size: var(--persona-chat-font-size, 15px);
    --_radius: var(--persona-chat-radius, 16px);
    --_offset: var(--persona-chat-offset, 20px);
    --_launcher-size: var(--persona-chat-launcher-size, 56px);
    --_z: var(--persona-chat-z-index, 2147483000);
    --_shadow: var(--persona-chat-shadow, 0 12px 40px rgb(0 0 0 / 0.18));
    --_focus: var(--persona-chat-focus-ring-color, var(--_link));
    display: block;
    font-family: var(--_font);
    font-size: var(--_font-size);
    line-height: 1.5;
    color: var(--_fg);
  }
  /* theme="auto" follows the visitor's system setting through color-scheme and light-dark(). */
  :host([theme='light']) {
    color-scheme: light;
  }
  :host([theme='dark']) {
    color-scheme: dark;
  }
  :host([hidden]) {
    display: none;
  }
  *,
  *::before,
  *::after {
    box-sizing: border-box;
  }
  button {
    font: inherit;
    color: inherit;
    cursor: pointer;
  }
  :focus-visible {
    outline: 2px solid var(--_focus);
    outline-offset: 2px;
  }

  /* Launcher mode */
  .launcher {
    position: fixed;
    inset-block-end: var(--_offset);
    inset-inline-end: var(--_offset);
    z-index: var(--_z);
    inline-size: var(--_launcher-size);
    block-size: var(--_launcher-size);
    border: 2px solid transparent;
    border-radius: 50%;
    /* The launcher sits on the host's page, light or dark: the deeper accent keeps 3:1 against either. */
    background: var(--_brand-l);
    color: var(--persona-chat-on-accent-color, var(--_on-l));
    box-shadow: var(--_shadow);
    display: grid;
    place-items: center;
    transition: transform 0.15s;
  }
  .launcher:hover {
    transform: scale(1.05);
  }
  .launcher svg {
    inline-size: 26px;
    block-size: 26px;
  }
  :host([position='bottom-left']) .launcher {
    inset-inline: var(--_offset) auto;
  }
  @media (prefers-reduced-motion: reduce) {
    .launcher {
      transition: none;
    }
  }
`;

/**
 * The launcher script's notice that the chat cannot be loaded, where the panel would be: above the launcher, or in
 * an inline element's box. Only the launcher script uses it; the chat has its own error notices.
 */
export const unavailableCss = css`
  .unavailable {
    position: fixed;
    inset-block-end: calc(var(--_offset) + var(--_launcher-size) + 12px);
    inset-inline-end: var(--_offset);
    z-index: var(--_z);
    padding: 12px 16px;
    border: 1px solid var(--_border);
    border-radius: var(--_radius);
    background: var(--_bg);
    color: var(--_error);
  }
  :host([position='bottom-left']) .unavailable {
    inset-inline: var(--_offset) auto;
  }
  :host([mode='inline']) .unavailable {
    position: static;
  }
`;

/** The launcher's icon, a speech bubble (an SVG path in a 24 × 24 box). */
export const chatIconPath = 'M21 12a8 8 0 0 1-11.6 7.1L4 20l1-4.4A8 8 0 1 1 21 12z';
