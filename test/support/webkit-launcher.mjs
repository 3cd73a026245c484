/**
 * A web-test-runner launcher for WebKit: Debian's WebKitGTK MiniBrowser, driven over W3C WebDriver by
 * WebKitWebDriver, on an Xvfb display of its own (MiniBrowser has no headless mode). No client library: the few
 * WebDriver commands it needs are plain JSON over HTTP. Test files run one after another in the one window.
 *
 * Xvfb and the driver start with the first session. Xvfb is started directly rather than through xvfb-run, so that
 * it picks a free display itself (`-displayfd`, no display-number race between runs) and listens on no TCP port;
 * the driver listens on 127.0.0.1 on a port picked at run time, and MiniBrowser's own automation socket is on
 * 127.0.0.1 too. Both end when the run stops, or when this process dies however it dies (see `guarded`), and
 * MiniBrowser ends with its display.
 */
import { spawn } from 'node:child_process';
import { freePort } from './ports.mjs';

/** WebDriver's code points for the keys that web-test-runner's sendKeys names (single characters pass as they are). */
const keyCodes = {
  Backspace: '\uE003',
  Tab: '\uE004',
  Enter: '\uE007',
  Shift: '\uE008',
  Control: '\uE009',
  Alt: '\uE00A',
  Escape: '\uE00C',
  PageUp: '\uE00E',
  PageDown: '\uE00F',
  End: '\uE010',
  Home: '\uE011',
  ArrowLeft: '\uE012',
  ArrowUp: '\uE013',
  ArrowRight: '\uE014',
  ArrowDown: '\uE015',
  Delete: '\uE017',
  Meta: '\uE03D',
  Space: ' ',
};

function keyCode(key) {
  const code = keyCodes[key] ?? ([...key].length === 1 ? key : undefined);
  if (code === undefined) throw new Error(`webkit launcher: no WebDriver key for "${key}"`);
  return code;
}

/**
 * Runs `command` under a small shell that waits for it and ends it once its stdin reaches the end: when stop()
 * closes that pipe, or when this process dies, even by SIGKILL, and the pipe closes with it. The shell exits with
 * the command, so an early exit is seen. Other file descriptors pass through (Xvfb's `-displayfd 3`).
 */
function guarded(command, args, { env, stdio = [] }) {
  // (A background list's stdin is /dev/null in sh, so the watcher reads the pipe through fd 9.)
  const script = 'exec 9<&0; "$@" 9<&- & pid=$!; (read _ <&9; kill $pid 2>/dev/null) & wait $pid';
  return spawn('sh', ['-c', script, 'guard', command, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'ignore', 'ignore', ...stdio],
  });
}

/** Starts Xvfb on a free display; resolves with it and the display's name once it takes connections. */
function startXvfb() {
  const xvfb = guarded('Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x1024x24'], {
    stdio: ['pipe'],
  });
  return new Promise((resolve, reject) => {
    xvfb.stdio[3].setEncoding('utf8').once('data', number => resolve({ xvfb, display: `:${number.trim()}` }));
    xvfb.once('error', reject);
    xvfb.once('exit', code => reject(new Error(`Xvfb exited (${code}) before it was ready`)));
  });
}

/** Resolves once the WebDriver server at `base` answers; rejects when `driver` exits first or 10 s pass. */
async function ready(base, driver) {
  const deadline = Date.now() + 10_000;
  while (driver.exitCode === null && Date.now() < deadline) {
    if (
      await fetch(`${base}/status`).then(
        response => response.ok,
        () => false,
      )
    )
      return;
    await new Promise(resolve => setTimeout(resolve, 50));
  }
  throw new Error(`WebKitWebDriver did not start at ${base} (exit code ${driver.exitCode})`);
}

/** One WebDriver command: JSON over HTTP, its `value` back, or an error naming the command. */
async function webDriver(base, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const { value } = await response.json();
  if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${value?.error}: ${value?.message}`);
  return value;
}

export class WebKitLauncher {
  name = 'WebKit';
  // web-test-runner's commands pick their driver by this type, and only the puppeteer and playwright branches of
  // its sendKeys know `down` and `up` (the webdriver branch throws on them). So this launcher says 'puppeteer' and
  // getPage() returns a page whose `keyboard` and `mouse` speak WebDriver actions and whose `setViewport` sizes the
  // window; the commands this suite does not use (emulateMedia, …) find nothing there and fail saying so.
  type = 'puppeteer';
  concurrency = 1;

  #driverPath;
  #browserPath;
  /** The processes, the driver's address and the session: { xvfb, driver, base, session }, once started. */
  #started;
  #active = new Set();
  /** The keys held down by `keyboard.down` until `keyboard.up`. */
  #held = new Set();

  constructor({ driverPath, browserPath }) {
    this.#driverPath = driverPath;
    this.#browserPath = browserPath;
  }

  #start() {
    this.#started ??= (async () => {
      const { xvfb, display } = await startXvfb();
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      // MiniBrowser inherits the driver's environment. Without a GPU its accelerated compositing renders through
      // Mesa's software rasteriser, which crashed the browser mid-suite on this machine; drawing without it is enough
      // for tests.
      const driver = guarded(this.#driverPath, ['--host=127.0.0.1', `--port=${port}`], {
        env: { DISPLAY: display, WEBKIT_DISABLE_COMPOSITING_MODE: '1' },
      });
      try {
        await ready(base, driver);
        const browserOptions = { binary: this.#browserPath, args: ['--automation'] };
        const capabilities = { alwaysMatch: { 'webkitgtk:browserOptions': browserOptions } };
        const { sessionId: session } = await webDriver(base, 'POST', '/session', { capabilities });
        // The viewport web-test-runner gives Chromium and Firefox, near enough: the window's outer size.
        await webDriver(base, 'POST', `/session/${session}/window/rect`, { width: 800, height: 600 });
        return { xvfb, driver, base, session };
      } catch (error) {
        driver.stdin.end();
        xvfb.stdin.end();
        throw error;
      }
    })();
    return this.#started;
  }

  /** A command of the WebDriver session, which starts with the first. */
  async #command(method, path, body) {
    const { base, session } = await this.#start();
    return webDriver(base, method, `/session/${session}${path}`, body);
  }

  async startSession(sessionId, url) {
    this.#active.add(sessionId);
    await this.#command('POST', '/url', { url });
  }

  isActive(sessionId) {
    return this.#active.has(sessionId);
  }

  getBrowserUrl() {
    return this.#command('GET', '/url');
  }

  async stopSession(sessionId) {
    this.#active.delete(sessionId);
    // As web-test-runner's own launchers do: leave the page, stopping whatever it still runs.
    await this.#command('POST', '/url', { url: 'about:blank' });
    return {};
  }

  startDebugSession() {
    throw new Error('The WebKit launcher has no debug mode; debug the file in Chromium or Firefox.');
  }

  /** The page the send-keys, send-mouse and set-viewport commands drive: a keyboard, a mouse and the window's size. */
  getPage() {
    const press = key => ({ type: 'keyDown', value: keyCode(key) });
    const release = key => ({ type: 'keyUp', value: keyCode(key) });
    // Each command is a whole chord: the keys held with `down` are pressed before it and released after it, so
    // nothing stays pressed between commands, whatever the driver keeps.
    const chord = keys =>
      this.#command('POST', '/actions', {
        actions: [
          {
            type: 'key',
            id: 'keyboard',
            actions: [
              ...[...this.#held].map(press),
              ...keys.flatMap(key => [press(key), release(key)]),
              ...[...this.#held].reverse().map(release),
            ],
          },
        ],
      });
    const buttons = ['left', 'middle', 'right'];
    const pointer = action =>
      this.#command('POST', '/actions', {
        actions: [{ type: 'pointer', id: 'mouse', parameters: { pointerType: 'mouse' }, actions: [action] }],
      });
    // The driver keeps the pointer's position and buttons from one command to the next, as a visitor's mouse does.
    const mouse = {
      move: (x, y) => pointer({ type: 'pointerMove', x: Math.round(x), y: Math.round(y), origin: 'viewport' }),
      down: ({ button } = {}) => pointer({ type: 'pointerDown', button: buttons.indexOf(button ?? 'left') }),
      up: ({ button } = {}) => pointer({ type: 'pointerUp', button: buttons.indexOf(button ?? 'left') }),
      click: async (x, y, options) => {
        await mouse.move(x, y);
        await mouse.down(options);
        await mouse.up(options);
      },
      reset: () => this.#command('DELETE', '/actions'),
    };
    return {
      // The window's outer size is set so that its inner size, the viewport, is the one asked for.
      setViewport: async ({ width, height }) => {
        const inner = () =>
          this.#command('POST', '/execute/sync', {
            script: 'return [innerWidth, innerHeight, outerWidth - innerWidth, outerHeight - innerHeight]',
            args: [],
          });
        const [, , dx, dy] = await inner();
        await this.#command('POST', '/window/rect', { width: width + dx, height: height + dy });
        // With no window manager on the display, the window may take its new size a little later: it is waited for.
        let [w, h] = await inner();
        for (let tries = 0; tries < 50 && (w !== width || h !== height); tries++) {
          await new Promise(resolve => setTimeout(resolve, 40));
          [w, h] = await inner();
        }
        if (w !== width || h !== height)
          throw new Error(`webkit launcher: the viewport is ${w}x${h}, not ${width}x${height}`);
      },
      keyboard: {
        type: text => chord([...text]),
        press: key => chord([key]),
        down: async key => void this.#held.add(key),
        up: async key => void this.#held.delete(key),
      },
      mouse,
    };
  }

  async stop() {
    const started = await this.#started?.catch(() => undefined);
    this.#started = undefined;
    if (!started) return;
    const { xvfb, driver, base, session } = started;
    await webDriver(base, 'DELETE', `/session/${session}`).catch(() => {});
    const exited = child =>
      child.exitCode === null && child.signalCode === null ? new Promise(resolve => child.once('exit', resolve)) : null;
    driver.stdin.end();
    xvfb.stdin.end();
    await Promise.all([exited(driver), exited(xvfb)]);
  }
}
