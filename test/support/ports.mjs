import { createServer } from 'node:net';

/** A port free on 127.0.0.1 right now, for a server of the tests to listen on. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}
