/**
 * The browsers of the web-test-runner suite, one per engine, all installed from Debian, none downloaded:
 * - chromium: Chromium through the DevTools protocol (puppeteer-core, through @web/test-runner-chrome);
 * - firefox: Firefox ESR through WebDriver BiDi (the same launcher with puppeteer-core's Firefox support);
 * - webkit: WebKitGTK's MiniBrowser through WebKitWebDriver, on a display of its own (./webkit-launcher.mjs).
 * `BROWSERS` (comma-separated) picks some of them, e.g. `BROWSERS=firefox npm run test:browser`; all by default.
 */
import { existsSync, readdirSync } from 'node:fs';
import { chromeLauncher, puppeteerCore } from '@web/test-runner-chrome';
import { chromiumFlags, findChromium } from './chromium.mjs';
import { WebKitLauncher } from './webkit-launcher.mjs';

export const engines = ['chromium', 'firefox', 'webkit'];

/** Stops the run with one line saying what to install or set. */
function missing(what, install, variable) {
  console.error(
    `persona-chat tests: ${what} not found. Install it (Debian: apt-get install ${install}), set ${variable}, ` +
      'or leave its engine out with BROWSERS (e.g. BROWSERS=chromium).',
  );
  process.exit(1);
}

function findFirefox() {
  const path = process.env.FIREFOX_PATH ?? ['/usr/bin/firefox-esr', '/usr/bin/firefox'].find(p => existsSync(p));
  if (!path || !existsSync(path)) missing('Firefox', 'firefox-esr', 'FIREFOX_PATH');
  return path;
}

/** WebKitWebDriver, and the MiniBrowser of the same WebKitGTK (its folder is named by architecture and API). */
function findWebKit() {
  const driverPath = process.env.WEBKIT_WEBDRIVER_PATH ?? '/usr/bin/WebKitWebDriver';
  if (!existsSync(driverPath)) missing('WebKitWebDriver', 'webkit2gtk-driver', 'WEBKIT_WEBDRIVER_PATH');
  const browserPath =
    process.env.WEBKIT_MINIBROWSER_PATH ??
    readdirSync('/usr/lib', { withFileTypes: true })
      .filter(entry => entry.isDirectory())
      .flatMap(entry =>
        ['webkit2gtk-4.1', 'webkit2gtk-4.0', 'webkitgtk-6.0'].map(api => `/usr/lib/${entry.name}/${api}`),
      )
      .map(folder => `${folder}/MiniBrowser`)
      .find(path => existsSync(path));
  if (!browserPath || !existsSync(browserPath)) missing('MiniBrowser', 'webkit2gtk-driver', 'WEBKIT_MINIBROWSER_PATH');
  if (!process.env.PATH?.split(':').some(folder => existsSync(`${folder}/Xvfb`))) missing('Xvfb', 'xvfb', 'PATH');
  return { driverPath, browserPath };
}

/**
 * puppeteer-core sets the viewport with two BiDi commands side by side, the size and the screen orientation;
 * Firefox ESR 140.12 knows only the first, and refuses the second ("unknown command"), which would fail every page.
 * The orientation is not needed here: the refusal is let pass once the size is applied.
 */
function tolerateOrientation(page) {
  const setViewport = page.setViewport.bind(page);
  page.setViewport = async viewport => {
    try {
      await setViewport(viewport);
    } catch (error) {
      if (!/unknown command emulation\.setScreenOrientationOverride/.test(String(error?.message))) throw error;
      const size = () => page.evaluate('[innerWidth, innerHeight]');
      for (let tries = 0; tries < 100; tries++) {
        const [width, height] = await size();
        if (width === viewport.width && height === viewport.height) return;
        await new Promise(resolve => setTimeout(resolve, 20));
      }
      throw new Error(`Firefox: the viewport is not ${viewport.width}x${viewport.height}`, { cause: error });
    }
  };
  return page;
}

const launchers = {
  chromium: () =>
    chromeLauncher({ launchOptions: { executablePath: findChromium(), headless: true, args: chromiumFlags } }),
  // puppeteer-core's own Firefox support (no `puppeteer` package, which would download a browser).
  firefox: () =>
    chromeLauncher({
      puppeteer: puppeteerCore,
      launchOptions: { browser: 'firefox', protocol: 'webDriverBiDi', executablePath: findFirefox(), headless: true },
      createPage: async ({ browser }) => tolerateOrientation(await browser.newPage()),
    }),
  webkit: () => new WebKitLauncher(findWebKit()),
};

/** The engines BROWSERS names (comma-separated), in the order of `engines`; all of them when it is unset. */
export function pickedEngines(names = process.env.BROWSERS || engines.join(',')) {
  const picked = names.split(',').map(name => name.trim().toLowerCase());
  if (picked.some(name => !engines.includes(name))) {
    console.error(`persona-chat tests: BROWSERS=${names}: each must be one of ${engines.join(', ')}.`);
    process.exit(1);
  }
  return engines.filter(engine => picked.includes(engine));
}

/** The web-test-runner launchers of the engines BROWSERS names. */
export function browserLaunchers() {
  return pickedEngines().map(engine => launchers[engine]());
}
