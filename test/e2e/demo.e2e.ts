import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { chromiumFlags, findChromium } from '../support/chromium.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
/** Where the screenshots go, to be looked at. */
export const screenshots = `${root}test-results/screenshots`;

/** The demo as a visitor meets it: `npm start`, then real Chromium. */
describe('the demo, end to end', { timeout: 180_000 }, () => {
  let demo: ReturnType<typeof spawn>;
  let url: string;
  let browser: Browser;
  const violations: string[] = [];

  before(async () => {
    await mkdir(screenshots, { recursive: true });
    demo = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
      detached: true,
    });
    url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: demo.stdout! }).on('line', line => {
        const match = /persona-chat demo: (\S+)/.exec(line);
        if (match) resolve(match[1]!);
      });
      demo.once('exit', code => reject(new Error(`npm start exited with ${code}`)));
    });
    browser = await chromium.launch({ executablePath: findChromium(), args: chromiumFlags, headless: true });
  });
  after(async () => {
    await browser?.close();
    if (demo?.pid) process.kill(-demo.pid, 'SIGINT');
  });

  /**
   * A page of the demo at `path`, its CSP and Trusted Types violations kept in `violations`; `before` runs first (a
   * route, a listener).
   */
  async function page(
    path: string,
    options: { colorScheme?: 'light' | 'dark'; width?: number; forcedColors?: 'active' } = {},
    before?: (p: Page) => Promise<void> | void,
  ): Promise<Page> {
    const context = await browser.newContext({
      viewport: { width: options.width ?? 1200, height: 800 },
      colorScheme: options.colorScheme ?? 'light',
      forcedColors: options.forcedColors ?? 'none',
      reducedMotion: 'reduce',
    });
    const p = await context.newPage();
    await before?.(p);
    p.on('console', message => {
      if (/Content Security Policy|TrustedHTML|Trusted Type/i.test(message.text())) violations.push(message.text());
    });
    await p.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', e =>
        console.error(`Content Security Policy: ${e.violatedDirective}`),
      );
    });
    await p.goto(url + path);
    return p;
  }

  const chat = (p: Page) => p.locator('persona-chat');

  /**
   * The files a page fetched besides itself, as paths: each script, style sheet, image or font, and each call to the
   * backend, in order. `loading` is written into the demo's own page as a site would write it, the page served with
   * the demo's headers (its strict CSP), so that the same page is compared with and without it.
   */
  async function fetchedFiles(loading?: 'idle') {
    const files: string[] = [];
    const p = await page('', {}, async p => {
      p.on('request', request => {
        if (!request.isNavigationRequest()) files.push(new URL(request.url()).pathname);
      });
      if (!loading) return;
      await p.route(url, async route => {
        const response = await route.fetch();
        const body = (await response.text()).replace('<persona-chat', `<persona-chat loading="${loading}"`);
        await route.fulfill({ response, body });
      });
    });
    const launcher = chat(p).locator('[part="launcher"]');
    await launcher.waitFor();
    // The page idle: its load ended, the network quiet for half a second, and two idle callbacks run.
    await p.waitForLoadState('networkidle');
    await p.evaluate(() => new Promise(done => requestIdleCallback(() => requestIdleCallback(done))));
    await p.waitForLoadState('networkidle');
    const idle = [...files];
    await launcher.hover();
    await p.waitForFunction(() => customElements.get('persona-chat'));
    await p.waitForLoadState('networkidle');
    const hovered = [...files];
    await launcher.click();
    await chat(p).locator('textarea:focus').waitFor();
    await p.waitForLoadState('networkidle');
    const opened = [...files];
    await p.context().close();
    return { idle, hovered: hovered.slice(idle.length), opened: opened.slice(hovered.length) };
  }

  it('fetches the launcher alone until the visitor shows intent, then the chat beside it, under the strict CSP', async t => {
    const { idle, hovered, opened } = await fetchedFiles();
    t.diagnostic(`idle: ${idle.join(' ')}; on the first hover: ${hovered.join(' ')}; on opening: ${opened.join(' ')}`);
    const ours = (files: string[]) => files.filter(file => /persona-chat/.test(file));
    assert.deepEqual(ours(idle), ['/persona-chat.js'], 'an idle page fetched the launcher and nothing else of ours');
    assert.deepEqual(
      ours(hovered).map(file => file.replace(/-[\w-]{6}\.js$/, '-*.js')),
      ['/persona-chat-define-*.js'],
      'a pointer over it fetches the chat',
    );
    assert.ok(
      ours(opened).every(file => file.startsWith('/persona-chat/')),
      `opening fetches no more code, only the backend: ${opened.join(' ')}`,
    );
    assert.deepEqual(violations, []);
  });

  it('fetches the chat once the page is idle with loading="idle", before any intent', async t => {
    const { idle, hovered, opened } = await fetchedFiles('idle');
    t.diagnostic(`idle: ${idle.join(' ')}; on the first hover: ${hovered.join(' ')}; on opening: ${opened.join(' ')}`);
    const ours = (files: string[]) => files.filter(file => /persona-chat/.test(file));
    assert.deepEqual(
      ours(idle).map(file => file.replace(/-[\w-]{6}\.js$/, '-*.js')),
      ['/persona-chat.js', '/persona-chat-define-*.js'],
      'the launcher, then the chat while the page was idle',
    );
    assert.deepEqual(ours(hovered), [], 'a pointer over it fetches nothing more');
    assert.deepEqual(violations, []);
  });

  it('opens the launcher, streams a reply with footnotes, and restores it after a reload', async () => {
    const p = await page('');
    await p.screenshot({ path: `${screenshots}/1-launcher-closed.png` });
    await chat(p).locator('[part="launcher"]').click();
    const input = chat(p).locator('textarea');
    await input.waitFor();
    await p.screenshot({ path: `${screenshots}/2-open.png` });
    await input.fill('How do I return a tent?');
    await input.press('Enter');
    await chat(p).locator('.message.assistant .markdown').first().waitFor();
    await p.waitForTimeout(600);
    await p.screenshot({ path: `${screenshots}/3-streaming.png` });
    const footnote = chat(p).locator('sup.cite a').first();
    await footnote.waitFor({ timeout: 30_000 });
    await chat(p).locator('[part="citations"]').waitFor({ timeout: 30_000 });
    await footnote.click();
    await p.screenshot({ path: `${screenshots}/4-sources-expanded.png` });
    const reply = await chat(p).locator('.message.assistant').last().innerText();
    assert.match(reply, /Returns and exchanges/);
    await p.reload();
    await chat(p).locator('[part="launcher"]').click();
    await chat(p).locator('.message.user').first().waitFor();
    assert.equal(await chat(p).locator('.message.user').first().innerText(), 'How do I return a tent?');
    assert.match(await chat(p).locator('[part="citations"]').first().innerText(), /Returns and exchanges/);
  });

  it('looks right dark, right-to-left and on a narrow screen', async () => {
    const dark = await page('help.html', { colorScheme: 'dark' });
    await chat(dark).locator('textarea').fill('Does it work with a strict CSP?');
    await chat(dark).locator('textarea').press('Enter');
    await chat(dark).locator('[part="citations"]').waitFor({ timeout: 30_000 });
    await dark.screenshot({ path: `${screenshots}/5-dark.png` });
    const rtl = await page('playground.html');
    await rtl.selectOption('select[name="dir"]', 'rtl');
    await rtl.selectOption('select[name="theme"]', 'light');
    await chat(rtl).locator('textarea').fill('Do you rent tents?');
    await chat(rtl).locator('textarea').press('Enter');
    await chat(rtl).locator('[part="citations"]').waitFor({ timeout: 30_000 });
    await rtl.screenshot({ path: `${screenshots}/6-rtl.png` });
    const narrow = await page('', { width: 390 });
    await chat(narrow).locator('[part="launcher"]').click();
    await chat(narrow).locator('textarea').waitFor();
    const box = await chat(narrow).locator('[part="panel"]').boundingBox();
    assert.equal(Math.round(box!.width), 390, 'the panel fills a narrow screen');
    await narrow.screenshot({ path: `${screenshots}/7-narrow.png` });
  });

  it('keeps every edge, the focus and the typing dots in forced colours', async () => {
    const p = await page('', { forcedColors: 'active' });
    await chat(p).locator('[part="launcher"]').click();
    const input = chat(p).locator('textarea');
    await input.waitFor();
    await p.screenshot({ path: `${screenshots}/11-forced-colors-open.png` });
    await input.fill('How long does shipping take?');
    await input.press('Enter');
    await chat(p).locator('.typing, .message.assistant .markdown').first().waitFor();
    await p.screenshot({ path: `${screenshots}/12-forced-colors-streaming.png` });
    await chat(p).locator('[part="citations"]').waitFor({ timeout: 30_000 });
    await input.focus();
    await p.keyboard.press('Shift+Tab');
    await p.keyboard.press('Tab');
    await p.screenshot({ path: `${screenshots}/13-forced-colors-focused-composer.png` });
    const outline = await input.evaluate(el => getComputedStyle(el).outlineStyle);
    assert.equal(outline, 'solid', 'the focused message box shows its focus');
  });

  it('speaks the language the page asks for: Arabic right to left, German, Japanese', async () => {
    const p = await page('playground.html');
    for (const [n, language] of [
      [8, 'ar'],
      [9, 'de'],
      [10, 'ja'],
    ] as const) {
      await p.selectOption('select[name="lang"]', language);
      await chat(p).locator(`[part="panel"][lang="${language}"]`).waitFor();
      await p.screenshot({ path: `${screenshots}/${n}-lang-${language}.png` });
    }
    assert.equal(await chat(p).locator('textarea').getAttribute('placeholder'), 'メッセージを入力…');
  });

  it('runs the classic-script build on a plain page with a strict CSP and Trusted Types', async () => {
    const p = await page('plain.html');
    const csp = await p.evaluate(async () => (await fetch(location.href)).headers.get('content-security-policy'));
    assert.match(csp!, /require-trusted-types-for 'script'/);
    await chat(p).locator('[part="launcher"]').click();
    await chat(p).locator('textarea').fill('What are your store hours?');
    await chat(p).locator('textarea').press('Enter');
    await chat(p).locator('[part="citations"]').waitFor({ timeout: 30_000 });
    assert.match(await chat(p).locator('.message.assistant').last().innerText(), /9 a\.m\. to 8 p\.m\./);
    assert.deepEqual(violations, [], 'no CSP or Trusted Types violation on any page');
  });
});
