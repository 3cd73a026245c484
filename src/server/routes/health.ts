/**
 * @module
 * Health checks for a load balancer or an orchestrator: `GET /healthz` says the process answers (liveness);
 * `GET /readyz` says this instance should get traffic: its store answers (within a second), the service answers,
 * and it is not draining. The service is asked at most every few seconds, whatever the rate of probes.
 */
import { Hono } from 'hono';
import type { HealthReport } from '../../protocol.js';
import type { Env } from '../env.js';
import type { Parts } from '../parts.js';

const serviceCheckMs = 5000;
/**
 * How long the store has to answer a probe. A stalled Redis (a paused process, a connection gone half-open) leaves a
 * ping unanswered until the store's own command timeout or longer, and a probe that does not answer in time tells a
 * load balancer nothing: past this, the store counts as unavailable.
 */
const storePingMs = 1000;
/** An externalUserId no visitor has: listing its conversations is the cheapest authenticated call there is. */
const probeUser = 'persona-chat:readiness-probe';

export function healthRoutes({ service, store, runs }: Parts) {
  const app = new Hono<Env>();
  let serviceCheck: { at: number; result: Promise<boolean> } | undefined;

  const serviceUp = () => {
    if (!serviceCheck || performance.now() - serviceCheck.at > serviceCheckMs) {
      const result = service.listUserConversations(probeUser, { signal: AbortSignal.timeout(3000) }).then(
        () => true,
        () => false,
      );
      serviceCheck = { at: performance.now(), result };
    }
    return serviceCheck.result;
  };

  const storeUp = () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<false>(resolve => (timer = setTimeout(resolve, storePingMs, false)));
    const answered = store.ping().then(
      () => true,
      () => false,
    );
    return Promise.race([answered, late]).finally(() => clearTimeout(timer));
  };

  app.get('/healthz', c => {
    c.header('cache-control', 'no-store');
    return c.json({ status: 'ok' });
  });

  app.get('/readyz', async c => {
    const [storeIsUp, serviceIsUp] = await Promise.all([storeUp(), serviceUp()]);
    const ready = storeIsUp && serviceIsUp && !runs.draining;
    const report: HealthReport = {
      status: runs.draining ? 'draining' : ready ? 'ready' : 'unavailable',
      store: storeIsUp ? 'ok' : 'unavailable',
      service: serviceIsUp ? 'ok' : 'unavailable',
    };
    c.header('cache-control', 'no-store');
    return c.json(report, ready ? 200 : 503);
  });

  return app;
}
