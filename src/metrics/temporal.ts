import type { Config } from '../config';

/**
 * Where the Temporal SDK's core serves its Prometheus metrics in a worker process: on the
 * loopback only, since the worker's own /metrics includes them. None while METRICS_PORT is unset.
 */
export function temporalMetricsAddress(config: Pick<Config, 'METRICS_PORT' | 'TEMPORAL_METRICS_PORT'>): string | undefined {
  if (!config.METRICS_PORT) return undefined;
  return `127.0.0.1:${config.TEMPORAL_METRICS_PORT ?? config.METRICS_PORT + 1}`;
}
