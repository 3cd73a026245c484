import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { originPolicy, refusalNotes } from '../../src/server/origins.js';
import { expectError, setup } from '../support/backend.js';

describe('allowed origins', () => {
  it('match exactly, or any subdomain of a https://*.example.com pattern, with its scheme and port', () => {
    const allows = originPolicy(['https://*.example.com', 'http://*.dev.example.org:8080', 'https://www.example.net']);
    for (const origin of [
      'https://a.example.com',
      'https://a.b.example.com',
      'https://xn--bcher-kva.example.com',
      'http://app.dev.example.org:8080',
      'https://www.example.net',
    ]) {
      assert.ok(allows(origin), `allows ${origin}`);
    }
    for (const origin of [
      'https://example.com',
      'https://.example.com',
      'https://a..example.com',
      'https://example.com.evil.net',
      'https://evilexample.com',
      'https://a.evilexample.com',
      'http://a.example.com',
      'https://a.example.com:8443',
      'https://a.example.com:443',
      'https://A.example.com',
      'https://a.example.com/',
      'https://a.example.com.',
      'https://user@a.example.com',
      'https://a.example.com@evil.net',
      'http://app.dev.example.org',
      'http://app.dev.example.org:8081',
      'https://example.net',
      'https://a.www.example.net',
      'null',
      '',
    ]) {
      assert.ok(!allows(origin), `refuses ${JSON.stringify(origin)}`);
    }
  });

  it('refuses any other wildcard, and anything but an origin, when the configuration is read', () => {
    for (const origin of [
      '*',
      'https://*',
      'https://*.com',
      'https://a*.example.com',
      'https://*example.com',
      'https://*.*.example.com',
      'https://a.*.example.com',
      '*.example.com',
      'https://*.example.*',
      'https://*.example.com/',
      'https://*.Example.com',
      'https://*.example.com:443',
      'https://*.127.0.0.1',
      'ftp://*.example.com',
    ]) {
      assert.throws(() => originPolicy([origin]), {
        name: 'OriginListError',
        message: /^takes one wildcard form, a subdomain pattern like https:\/\/\*\.example\.com/,
      });
    }
    for (const origin of ['https://www.example.com/', 'null', 'www.example.com', 'https://WWW.example.com']) {
      assert.throws(() => originPolicy([origin]), { name: 'OriginListError', message: /exact origins/ });
    }
    assert.throws(() => originPolicy([]), { name: 'OriginListError', message: /at least one origin/ });
    // The configuration names the setting.
    assert.throws(() => setup({ backend: { allowedOrigins: ['https://*'] } }).backend.check(), {
      name: 'ConfigError',
      setting: 'allowedOrigins',
      message: /"allowedOrigins" .* takes one wildcard form, a subdomain pattern like https:\/\/\*\.example\.com/,
    });
  });

  it('serve a subdomain pattern, and tell stderr once per refused origin, naming it', async t => {
    const warn = t.mock.method(console, 'warn', () => {});
    const { request } = setup({ backend: { allowedOrigins: ['https://*.example.com'] } });
    const session = (origin: string) =>
      request('POST', '/session', { body: {}, headers: { origin, 'x-persona-chat': '1' } });
    const ok = await session('https://shop.eu.example.com');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://shop.eu.example.com');
    for (let i = 0; i < 3; i++) await expectError(session('https://example.com.evil.net'), 403, 'origin_not_allowed');
    const preflight = await request('OPTIONS', '/conversations', {
      headers: { origin: 'https://example.com.evil.net', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal(warn.mock.callCount(), 1, 'one line for that origin, however often it comes');
    assert.match(String(warn.mock.calls[0]!.arguments[0]), /refused the origin "https:\/\/example\.com\.evil\.net"/);
    await expectError(session('http://shop.example.com'), 403, 'origin_not_allowed');
    await expectError(
      request('POST', '/session', { body: {}, headers: { 'x-persona-chat': '1' } }),
      403,
      'origin_not_allowed',
    );
    assert.equal(warn.mock.callCount(), 2, 'another origin is told too; no Origin at all is nothing to tell');
    assert.match(String(warn.mock.calls[1]!.arguments[0]), /"http:\/\/shop\.example\.com"/);
  });

  it('remember a bounded number of refused origins', () => {
    const lines: string[] = [];
    const note = refusalNotes(line => lines.push(line));
    for (let i = 0; i <= 1000; i++) note(`https://site-${i}.example`);
    note('https://site-1000.example');
    assert.equal(lines.length, 1001, 'each told once');
    note('https://site-0.example');
    assert.equal(lines.length, 1002, 'the oldest was forgotten, so it is told again');
    note(`https://${'x'.repeat(5000)}.example`);
    assert.ok(lines.at(-1)!.length < 500, 'a long origin is cut in the line');
  });
});
