// The strings the element shows, resolved from English and the tables laid over it (a language's, the host's). The
// tables of each language are tested in locale.test.ts.
import { expect } from '@open-wc/testing';
import { en, errorText, resolveStrings } from '../../src/element/strings.js';
import type { Strings } from '../../src/element/strings.js';

describe('resolveStrings', () => {
  it('is English when nothing is laid over it, and leaves English as it was', () => {
    const strings = resolveStrings();
    expect(strings).to.deep.equal(en);
    expect(strings).not.to.equal(en);
    strings.send = 'Changed';
    expect(en.send).to.equal('Send');
    expect(resolveStrings(undefined, {}).send).to.equal('Send');
  });

  it('lays each table over the ones before it, English showing where none has a string', () => {
    const language: Partial<Strings> = { send: 'Envoyer', stop: 'Arrêter', heading: 'Discussion' };
    const host: Partial<Strings> = { send: 'Ask', subheading: 'We answer in seconds' };
    const strings = resolveStrings(language, host);
    expect([strings.send, strings.stop, strings.heading, strings.subheading]).to.deep.equal([
      'Ask',
      'Arrêter',
      'Discussion',
      'We answer in seconds',
    ]);
    expect([strings.placeholder, strings.retry]).to.deep.equal(['Type a message…', 'Retry']);
    expect(strings.charactersLeft(2)).to.equal('2 characters left');
  });

  it('takes a function for a string that is one, and a template with {n} standing for it', () => {
    const strings = resolveStrings(
      { source: n => `Quelle ${n}` },
      {
        unread: '{n} new' as never,
        deleteQuestion: 'Remove “{n}”? {n} will be gone.' as never,
        relevance: 'Score' as never,
      },
    );
    expect(strings.source(2)).to.equal('Quelle 2');
    expect(strings.unread(3)).to.equal('3 new');
    expect(strings.deleteQuestion('Tents')).to.equal('Remove “Tents”? Tents will be gone.');
    expect(strings.relevance('90%'), 'a template without {n}').to.equal('Score');
    expect(strings.said('Juniper'), 'English where none was given').to.equal('Juniper said:');
  });

  it('ignores strings it does not have, and values of the wrong kind', () => {
    const strings = resolveStrings({
      nothing: 'ignored',
      heading: 42,
      send: null,
      copy: () => 'Copy it',
      source: 7,
      typing: '',
    } as never);
    expect('nothing' in strings).to.equal(false);
    expect([strings.heading, strings.send, strings.copy, strings.source(1)]).to.deep.equal([
      'Chat',
      'Send',
      'Copy',
      'Source 1',
    ]);
    expect(strings.typing, 'an empty string is a string').to.equal('');
    expect(Object.keys(strings).sort()).to.deep.equal(Object.keys(en).sort());
  });
});

describe('errorText', () => {
  it('says what went wrong in the visitor’s words, by the error’s code', () => {
    expect(errorText(en, 'network_error')).to.equal(en.errorNetwork);
    expect(errorText(en, 'server_restarting')).to.equal(en.errorBusy);
    expect(errorText(en, 'upstream_unavailable')).to.equal(en.errorBusy);
    expect(errorText(en, 'invalid_request')).to.equal(en.errorTooLong);
    expect(errorText(en, 'interrupted')).to.equal(en.errorInterrupted);
  });

  it('falls back to the generic message for a code it has no words for', () => {
    expect(errorText(en, 'upstream_error')).to.equal(en.errorGeneric);
  });
});
