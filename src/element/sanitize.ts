/**
 * @module
 * The two sanitizers every piece of the model's markdown passes through before it is drawn: `safeUrl()`, which lets
 * only http(s) and mailto through, and `decodeEntities()`, which decodes character references the way a browser
 * would, so that an encoded `javascript:` is seen for what it is. Security-critical: changes need their tests.
 */
/** Allows http(s) and mailto only, after decoding entities and dropping control characters and whitespace. */
export function safeUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  // eslint-disable-next-line no-control-regex
  const cleaned = decodeEntities(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  let parsed: URL;
  try {
    parsed = new URL(cleaned);
  } catch {
    return undefined;
  }
  return ['http:', 'https:', 'mailto:'].includes(parsed.protocol) ? parsed.href : undefined;
}

/** Named entities: each name, then the character it stands for. */
const entities =
  'amp&lt<gt>quot"apos\'nbsp\u00a0copy©reg®trade™hellip…mdash—ndash–lsquo‘rsquo’ldquo“rdquo”laquo«raquo»' +
  'middot·bull•deg°plusmn±times×divide÷euro€pound£yen¥cent¢sect§para¶larr←rarr→uarr↑darr↓harr↔check✓' +
  'tab\tnewline\ncolon:sol/lpar(rpar)num#excl!quest?equals=';
const named: Record<string, string> = Object.fromEntries(
  [...entities.matchAll(/([a-z]+)([^a-z])/g)].map(([, name, char]) => [name, char]),
);

/** Decodes numeric character references and common named entities; anything else stays as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});?/gi, (whole, body: string) => {
    if (body[0] === '#') {
      // `0x…` reads as hexadecimal, `0…` as decimal.
      const code = Number('0' + body.slice(1));
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : '\ufffd';
    }
    return named[body.toLowerCase()] ?? whole;
  });
}
