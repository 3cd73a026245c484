/**
 * @module
 * What the two command-line programs share: one way to stop with a message, and a clean stop on Ctrl+C or SIGTERM.
 */

/** Prints `program: message` on stderr and exits with code 2. */
export function fail(program: string, message: string): never {
  process.stderr.write(`${program}: ${message}\n`);
  process.exit(2);
}

/**
 * Closes the servers on SIGINT or SIGTERM, then exits 0; gives up waiting after `giveUpMs`. A second signal exits at
 * once.
 */
export function stopOnSignals(close: (signal: NodeJS.Signals) => Promise<void>, giveUpMs = 2000) {
  const stop = (signal: NodeJS.Signals) => {
    process.once('SIGINT', () => process.exit(0));
    process.once('SIGTERM', () => process.exit(0));
    close(signal).then(
      () => process.exit(0),
      () => process.exit(0),
    );
    setTimeout(() => process.exit(0), giveUpMs).unref();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
