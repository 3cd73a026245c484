/**
 * @module
 * What the two command-line programs share: one way to stop with a message, and a clean stop on Ctrl+C or SIGTERM.
 */

/** Prints `program: message` on stderr and exits with code 2. */
export function fail(program: string, message: string): never {
  process.stderr.write(`${program}: ${message}\n`);
  process.exit(2);
}

/** Closes the servers on SIGINT or SIGTERM, then exits; gives up waiting after two seconds. */
export function stopOnSignals(close: () => Promise<void>) {
  const stop = () => {
    close().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
