import { Router } from 'express';
import type { WorkerRegistry } from '../../store/worker-registry';
import { send } from '../respond';
import * as R from '../../contracts/schemas/responses.schema';

/** GET /start/health: counts the browser workers that heartbeat, not a constant. */
export function healthRoutes(deps: { registry: WorkerRegistry }): Router {
  const router = Router();
  router.get('/start/health', async (_req, res) => {
    const workers = await deps.registry.alive();
    const free = workers.some((w) => w.sessions < w.capacity);
    send(res, R.healthSchema, 200, {
      success: true,
      status: workers.length ? 'healthy' : 'degraded',
      instancesAvailable: free,
      instanceCount: workers.length,
      sessionsOpen: workers.reduce((n, w) => n + w.sessions, 0),
      timestamp: new Date().toISOString(),
    });
  });
  return router;
}
