/**
 * @module
 * Health checks for a load balancer or an orchestrator: `GET /healthz` says the process answers (liveness);
 * `GET /readyz` says this instance should get traffic: its store answers, the service answers, and it is not
 * draining. The service is asked at most every few seconds, whatever the rate of probes.
 */
import { Hono } from 'hono';
import type { HealthReport } from '../../protocol.js';
import type { Env, Parts } from '../context.js';

const serviceCheckMs = 5000;
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

  app.get('/healthz', c => {
    c.header('cache-control', 'no-store');
    return c.json({ status: 'ok' });
  });

  app.get('/readyz', async c => {
    const [storeUp, serviceIsUp] = await Promise.all([
      store.ping().then(
        () => true,
        () => false,
      ),
      serviceUp(),
    ]);
    const ready = storeUp && serviceIsUp && !runs.draining;
    const report: HealthReport = {
      status: runs.draining ? 'draining' : ready ? 'ready' : 'unavailable',
      store: storeUp ? 'ok' : 'unavailable',
      service: serviceIsUp ? 'ok' : 'unavailable',
    };
    c.header('cache-control', 'no-store');
    return c.json(report, ready ? 200 : 503);
  });

  return app;
}
