import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import type { Logger } from '../logger';

let installed = false;

/**
 * Sends the Temporal SDK's own logs (and its core's) into our pino logger, and its metrics to
 * a Prometheus endpoint at `metricsAddress` when given. Once per process.
 */
export function installTemporalRuntime(logger: Logger, metricsAddress?: string): void {
  if (installed) return;
  installed = true;
  const log = logger.child({ component: 'temporal' });
  const level = log.level === 'debug' || log.level === 'trace' ? 'DEBUG' : 'INFO';
  Runtime.install({
    logger: new DefaultLogger(level, (entry: LogEntry) => {
      const meta = { ...entry.meta } as Record<string, unknown>;
      const method = entry.level === 'ERROR' ? 'error' : entry.level === 'WARN' ? 'warn' : entry.level === 'DEBUG' || entry.level === 'TRACE' ? 'debug' : 'info';
      log[method](meta, entry.message);
    }),
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true, useSecondsForDurations: true } } } : {}),
    },
    // The process drains on SIGTERM itself (API first, then workers, then browsers).
    shutdownSignals: [],
  });
}
