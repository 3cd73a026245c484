// The attribute parsers: pure, forgiving, and loud only once about a bad value.
import { expect } from '@open-wc/testing';
import { oneOf, parseList, parseStrings } from '../../src/element/attributes.js';

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

  it('take one of the allowed values, else the default, warning with the allowed values when one was set', () => {
    const modes = ['launcher', 'inline'] as const;
    expect(warnings(() => expect(oneOf('inline', modes, 'launcher', 'mode')).to.equal('inline'))).to.deep.equal([]);
    expect(warnings(() => expect(oneOf('', modes, 'launcher', 'mode')).to.equal('launcher'))).to.deep.equal([]);
    const said = warnings(() => expect(oneOf('popup', modes, 'launcher', 'mode')).to.equal('launcher'));
    expect(said).to.deep.equal(['<persona-chat>: mode="popup" is not one of launcher, inline; using launcher.']);
  });
});
