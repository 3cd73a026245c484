/**
 * @module
 * Which pages may use the backend: exact origins (`https://www.example.com`), and subdomain patterns
 * (`https://*.example.com`: any subdomain of example.com, at any depth, with that scheme and port, never example.com
 * itself). Any other wildcard is refused when the configuration is read. A refused origin is told once on stderr.
 */
/** What is wrong with a list of allowed origins, told in words that follow the setting's name; config.ts names it. */
export class OriginListError extends Error {
  override readonly name = 'OriginListError';
}

interface Pattern {
  /** `https://` or `http://`. */
  scheme: string;
  /** `.example.com`: what a matching host ends with. */
  suffix: string;
  /** `:8443`, or empty for the scheme's default port. */
  port: string;
}

/** An origin as browsers send it: a scheme, a lower-case (punycode) host and a port other than the default. */
const originShape = /^(https?:\/\/)([a-z0-9-]+(?:\.[a-z0-9-]+)*)(:\d{1,5})?$/;
/** The one wildcard form: a scheme, `*.`, a domain of two labels or more, and perhaps a port. */
const patternShape = /^(https?:\/\/)\*(\.[a-z0-9-]+(?:\.[a-z0-9-]+)+)(:\d{1,5})?$/;

function refuse(origin: string): never {
  throw new OriginListError(
    origin.includes('*')
      ? `takes one wildcard form, a subdomain pattern like https://*.example.com, not "${origin}"`
      : `must hold exact origins like https://www.example.com, not "${origin}"`,
  );
}

/** Checks the allowed origins and returns the test for an Origin header. Throws an OriginListError naming a bad one. */
export function originPolicy(origins: readonly string[]): (origin: string) => boolean {
  if (!Array.isArray(origins) || origins.length === 0) {
    throw new OriginListError('needs at least one origin');
  }
  const exact = new Set<string>();
  const patterns: Pattern[] = [];
  for (const origin of origins) {
    if (typeof origin !== 'string') refuse(String(origin));
    const pattern = patternShape.exec(origin);
    if (pattern) {
      const [, scheme, suffix, port = ''] = pattern;
      // What URL makes of an example host under the pattern must be the same text: a lower-case host, a port that
      // is not the scheme's default.
      const example = `${scheme}x${suffix}${port}`;
      if (!URL.canParse(example) || new URL(example).origin !== example) refuse(origin);
      patterns.push({ scheme: scheme!, suffix: suffix!, port });
      continue;
    }
    // URL takes `*` in a host (`https://*` is an origin to it), which no page ever has.
    if (origin.includes('*')) refuse(origin);
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      refuse(origin);
    }
    exact.add(origin);
  }
  return origin => {
    if (exact.has(origin)) return true;
    if (!patterns.length) return false;
    const parts = originShape.exec(origin);
    if (!parts) return false;
    const [, scheme, host, port = ''] = parts;
    return patterns.some(
      p => p.scheme === scheme && p.port === port && host!.length > p.suffix.length && host!.endsWith(p.suffix),
    );
  };
}

/** How many refused origins are remembered so as to be told once; past that, the oldest is forgotten. */
const rememberedRefusals = 1000;

/**
 * Tells stderr, once per origin, that requests from it were refused: a site whose page's origin is missing from the
 * list sees why its chat does not start. Remembers a bounded number of origins.
 */
export function refusalNotes(warn: (message: string) => void = message => console.warn(message)) {
  const told = new Set<string>();
  return function noteRefusal(origin: string) {
    const shown = origin.slice(0, 200);
    if (told.has(shown)) return;
    if (told.size >= rememberedRefusals) told.delete(told.values().next().value!);
    told.add(shown);
    warn(
      `persona-chat backend: refused the origin ${JSON.stringify(shown)}: it is not in allowedOrigins ` +
        '(--allowed-origin / PERSONA_CHAT_ALLOWED_ORIGIN). Further refusals of this origin are not logged.',
    );
  };
}
