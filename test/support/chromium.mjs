/**
 * Finds a Chromium for the browser tests: CHROME_PATH, then Debian's /usr/bin/chromium, then the usual Chrome
 * paths. When none is there and we run as root with apt-get, installs Debian's chromium and says so; otherwise
 * stops with one line saying what to install or set.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const usual = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/opt/google/chrome/chrome',
  '/snap/bin/chromium',
  '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  '/Applications/Chromium.app/Contents/MacOS/Chromium',
  'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
];

const hasAptGet = () => {
  try {
    execFileSync('apt-get', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

export function findChromium() {
  const fromEnv = process.env.CHROME_PATH;
  if (fromEnv) {
    if (existsSync(fromEnv)) return fromEnv;
    console.error(`persona-chat tests: CHROME_PATH is set to ${fromEnv}, which does not exist.`);
    process.exit(1);
  }
  const found = usual.find(path => existsSync(path));
  if (found) return found;
  if (process.platform === 'linux' && process.getuid?.() === 0 && hasAptGet()) {
    console.error("persona-chat tests: no Chromium found; installing Debian's chromium with apt-get.");
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  }
  console.error(
    'persona-chat tests need Chromium: install it (Debian: apt-get install chromium) or set CHROME_PATH to a Chrome or Chromium binary.',
  );
  process.exit(1);
}

/** Flags for a headless Chromium on a machine with no network but loopback. */
export const chromiumFlags = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-dev-shm-usage',
];
