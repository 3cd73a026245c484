import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { startEmulator } from '../../src/emulator/node.js';
import type { RunningEmulator } from '../../src/emulator/node.js';
import { formatInsights, insights } from '../../src/server/insights/index.js';
import { chromiumFlags, findChromium } from '../support/chromium.mjs';
import { hostileConversation } from '../server/insights/support.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const screenshots = `${root}test-results/screenshots`;
const reports = `${root}test-results/insights`;
const apiKey = 'sk-test-insights-0123456789abcdef';

/** The HTML report as its reader opens it: a file from disk, in real Chromium. */
describe('the insights report in a browser', { timeout: 120_000 }, () => {
  let running: RunningEmulator;
  let browser: Browser;
  let file: string;

  before(async () => {
    await Promise.all([mkdir(screenshots, { recursive: true }), mkdir(reports, { recursive: true })]);
    running = await startEmulator({ apiKey, seed: { conversations: 600, end: '2026-03-01' } });
    // One visitor wrote markup where the report shows text: it must show as text and fetch nothing.
    running.emulator.store.add(hostileConversation('2026-02-27T12:00:00Z'));
    const report = await insights({
      service: { baseUrl: running.url, apiKey },
      from: new Date('2026-01-30T00:00:00Z'),
      to: new Date('2026-03-01T00:00:00Z'),
      includeText: true,
      pricePer1K: 0.002,
      now: new Date('2026-03-01T08:00:00Z'),
    });
    file = `${reports}/report.html`;
    await writeFile(file, formatInsights(report, 'html'));
    browser = await chromium.launch({ executablePath: findChromium(), args: chromiumFlags, headless: true });
  });
  after(async () => {
    await browser?.close();
    await running?.close();
  });

  async function open(colorScheme: 'light' | 'dark'): Promise<{ page: Page; requests: string[]; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, colorScheme });
    const page = await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', request => requests.push(request.url()));
    page.on('console', message => problems.push(message.text()));
    page.on('pageerror', error => problems.push(error.message));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    return { page, requests, problems };
  }

  it('opens from disk with no request but itself, no script and no console message', async () => {
    const { page, requests, problems } = await open('light');
    assert.deepEqual(requests, [pathToFileURL(file).href], 'the report itself and nothing else');
    assert.deepEqual(problems, []);
    assert.equal(await page.locator('script').count(), 0);
    assert.equal(await page.locator('img, iframe, object, embed, link[rel=stylesheet]').count(), 0);
    assert.ok(await page.getByText('<img src=https://tracker.example/pixel.gif onerror=alert(1)>').count());
    assert.equal(await page.locator('h1').textContent(), 'Chat insights');
    assert.ok((await page.locator('svg[role=img]').count()) >= 2, 'its charts are inline SVG');
    await page.screenshot({ path: `${screenshots}/insights-light.png`, fullPage: true });
    await page.screenshot({
      path: `${screenshots}/insights-top.png`,
      fullPage: true,
      clip: { x: 0, y: 0, width: 1200, height: 1500 },
    });
    await page.screenshot({
      path: `${screenshots}/insights-lists.png`,
      fullPage: true,
      clip: { x: 0, y: 1500, width: 1200, height: 1500 },
    });
    await page.context().close();
  });

  it('follows a dark system theme and reads in print', async () => {
    const { page, requests } = await open('dark');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, 'rgb(17, 20, 24)');
    await page.screenshot({
      path: `${screenshots}/insights-dark.png`,
      fullPage: true,
      clip: { x: 0, y: 0, width: 1200, height: 1500 },
    });
    await page.emulateMedia({ media: 'print' });
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)');
    const pdf = await page.pdf({ format: 'A4' });
    assert.ok(pdf.byteLength > 10_000);
    assert.equal(requests.length, 1);
    await page.context().close();
  });
});
