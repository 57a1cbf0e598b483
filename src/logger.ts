import pino, { type Logger } from 'pino';

export type { Logger };

/** Fields whose values must never reach a log line. */
const REDACT = ['apiKey', 'authorization', 'headers.authorization', 'password', 'secrets', 'prompt', 'text', '*.apiKey', '*.password', '*.secrets'];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    { level, base: { service: 'browser-agent' }, redact: { paths: REDACT, censor: '[redacted]' }, timestamp: pino.stdTimeFunctions.isoTime },
    destination,
  );
}
