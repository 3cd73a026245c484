// The string tables: every language has every string, of the same kind, and numbers and plurals follow the
// language's own rules.
import { expect } from '@open-wc/testing';
import { isRightToLeft, languageOf } from '../../src/element/language.js';
import { languages, loadTable } from '../../src/element/locale.js';
import { en, resolveStrings } from '../../src/element/strings.js';
import type { Strings } from '../../src/element/strings.js';

describe('string tables', () => {
  it('covers the languages the element promises', () => {
    expect([...languages].sort()).to.deep.equal(
      ['ar', 'de', 'en', 'es', 'fr', 'he', 'it', 'ja', 'ko', 'nl', 'pl', 'pt', 'zh'].sort(),
    );
  });

  for (const language of languages.filter(l => l !== 'en')) {
    it(`has every string in ${language}, of the same kind as English's, and no other`, async () => {
      const table = (await loadTable(language)) as Record<string, unknown>;
      expect(Object.keys(table).sort()).to.deep.equal(Object.keys(en).sort());
      for (const [key, english] of Object.entries(en)) {
        expect(typeof table[key], key).to.equal(typeof english);
        if (typeof english === 'string' && english) expect(table[key], key).to.be.a('string').and.not.equal('');
        if (typeof english === 'function') expect((table[key] as (x: never) => string)(3 as never)).to.be.a('string');
      }
    });
  }

  it('picks the table of a tag by its language, English when there is none', () => {
    expect(
      ['pt-BR', 'zh-Hant-TW', 'de_CH', 'iw', 'EN-gb', 'sv', ''].map(tag => languageOf(tag, languages)),
    ).to.deep.equal(['pt', 'zh', 'de', 'he', 'en', 'en', 'en']);
    expect(['ar', 'he', 'fa', 'en'].map(isRightToLeft)).to.deep.equal([true, true, false, false]);
  });

  it('writes numbers and plurals as each language does', async () => {
    const pl = resolveStrings(await loadTable('pl'));
    expect([1, 3, 5, 22].map(n => pl.charactersLeft(n))).to.deep.equal([
      'Pozostał 1 znak',
      'Pozostały 3 znaki',
      'Pozostało 5 znaków',
      'Pozostały 22 znaki',
    ]);
    const ar = resolveStrings(await loadTable('ar'));
    expect(ar.charactersLeft(2)).to.equal('تبقّى حرفان');
    expect(ar.charactersLeft(11)).to.equal(`تبقّى ${new Intl.NumberFormat('ar').format(11)} حرفًا`);
    expect(ar.source(3), 'a footnote’s name has the digits it shows').to.equal('المصدر 3');
    const de = resolveStrings(await loadTable('de'));
    expect(de.charactersLeft(1500)).to.equal('Noch 1.500 Zeichen');
    expect([1, 2].map(n => en.charactersLeft(n))).to.deep.equal(['1 character left', '2 characters left']);
  });

  it('lays a host’s strings over the language’s, a template standing for a function', async () => {
    const strings: Strings = resolveStrings(await loadTable('fr'), {
      send: 'Go',
      charactersLeft: '{n} restants' as never,
      nothing: 'ignored',
      heading: 42,
    } as never);
    expect(strings.send).to.equal('Go');
    expect(strings.charactersLeft(7)).to.equal('7 restants');
    expect(strings.heading).to.equal('Discussion');
    expect(strings.placeholder).to.equal('Écrivez un message…');
    expect('nothing' in strings).to.equal(false);
  });
});
