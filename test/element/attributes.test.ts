// The attribute parsers: pure, forgiving, and loud only once about a bad value.
import { expect } from '@open-wc/testing';
import { headingLevel, parseList, parseStrings, warnUnknown } from '../../src/element/attributes.js';

/** What console.warn said while `work` ran. */
function warnings(work: () => void): string[] {
  const said: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => void said.push(args.join(' '));
  try {
    work();
  } finally {
    console.warn = warn;
  }
  return said;
}

describe('attribute parsers', () => {
  it('read a list as a JSON array of strings, or as strings separated by |', () => {
    expect(parseList('["Opening hours?", "", 3, "Returns"]')).to.deep.equal(['Opening hours?', 'Returns']);
    expect(parseList(' Opening hours? | Returns |  ')).to.deep.equal(['Opening hours?', 'Returns']);
    expect(parseList('{"a": 1}')).to.deep.equal(['{"a": 1}'], 'JSON that is not an array is one item');
    expect(parseList(null)).to.deep.equal([]);
    expect(parseList('')).to.deep.equal([]);
  });

  it('read strings as a JSON object, and ignore anything else with one warning', () => {
    let parsed: unknown;
    expect(warnings(() => (parsed = parseStrings('{"send": "Go"}')))).to.deep.equal([]);
    expect(parsed).to.deep.equal({ send: 'Go' });
    for (const bad of ['["Go"]', 'send: Go', 'null']) {
      const said = warnings(() => (parsed = parseStrings(bad)));
      expect(parsed, bad).to.equal(undefined);
      expect(said, bad).to.have.length(1);
      expect(said[0]).to.contain('must be a JSON object of strings');
    }
    expect(warnings(() => (parsed = parseStrings(null)))).to.deep.equal([]);
    expect(parsed).to.equal(undefined);
  });

  it('warn of each value not allowed, naming the allowed ones and the default used, and of a heading level', () => {
    const known = {
      mode: 'inline',
      position: 'bottom-left',
      theme: 'dark',
      storage: 'none',
      loading: 'idle',
      headingLevel: 1,
    };
    expect(warnings(() => warnUnknown(known))).to.deep.equal([]);
    expect(
      warnings(() => warnUnknown({ ...known, mode: '', theme: '' })),
      'unset',
    ).to.deep.equal([]);
    expect(
      warnings(() => warnUnknown({ ...known, mode: 'popup', storage: 'cookie', loading: 'lazy', headingLevel: 9 })),
    ).to.deep.equal([
      '<persona-chat>: mode="popup" is not one of launcher, inline; using launcher.',
      '<persona-chat>: storage="cookie" is not one of local, session, none; using local.',
      '<persona-chat>: loading="lazy" is not one of intent, idle, eager; using intent.',
      '<persona-chat>: heading-level="9" is not a level from 1 to 6; using 2.',
    ]);
  });

  it('take a heading level from 1 to 6, else 2', () => {
    expect([1, 6, 0, 7, 2.5, NaN].map(headingLevel)).to.deep.equal([1, 6, 2, 2, 2, 2]);
  });
});
