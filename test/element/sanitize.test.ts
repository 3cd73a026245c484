// The two sanitizers every piece of a reply passes through: URLs, and the character references hidden in them.
// (The renderer's use of them, on hostile replies, is tested in render.test.ts.)
import { expect } from '@open-wc/testing';
import { decodeEntities, safeUrl } from '../../src/element/sanitize.js';

describe('sanitize', () => {
  it('allows only http(s) and mailto URLs, after decoding and cleaning', () => {
    expect(safeUrl('https://example.com/a?b=c')).to.equal('https://example.com/a?b=c');
    expect(safeUrl('mailto:help@example.com')).to.equal('mailto:help@example.com');
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      '&#106;avascript:alert(1)',
      'java\tscript:x',
      '\u0001javascript:x',
      'data:text/html,x',
      'vbscript:x',
      '/relative',
      '',
    ]) {
      expect(safeUrl(bad), bad).to.equal(undefined);
    }
  });

  it('gives back an allowed URL as the browser reads it, whatever references and whitespace hid it', () => {
    expect(safeUrl('https&colon;//example.com')).to.equal('https://example.com/');
    expect(safeUrl('  https://example.com/a b\n')).to.equal('https://example.com/ab');
    expect(safeUrl('HTTPS://Example.COM/Path')).to.equal('https://example.com/Path');
    expect(safeUrl('&#109;ailto:help@example.com')).to.equal('mailto:help@example.com');
    for (const bad of ['javascript&colon;alert(1)', 'java&#x0A;script:x', 'ja&Tab;vascript:x', null, undefined]) {
      expect(safeUrl(bad), String(bad)).to.equal(undefined);
    }
  });

  it('decodes numeric references and common named ones once, and leaves the rest as written', () => {
    expect(decodeEntities('&#106;&#x6A;&#X6a;&#106')).to.equal('jjjj');
    expect(decodeEntities('&amp; &AMP; &copy &hellip; &colon;')).to.equal('& & © … :');
    expect(decodeEntities('&amp;#106;'), 'decoded once, not twice').to.equal('&#106;');
    expect(decodeEntities('&unknown; & &;')).to.equal('&unknown; & &;');
    expect(decodeEntities('&#0;&#xD800;&#x110000;'), 'no such character').to.equal('\ufffd\ufffd\ufffd');
    expect(decodeEntities('&#x1F600;')).to.equal('😀');
  });
});
