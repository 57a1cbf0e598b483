import pino, { type Logger } from 'pino';

export type { Logger };

/** Fields whose values must never reach a log line. */
const REDACT = ['apiKey', 'authorization', 'headers.authorization', 'password', 'secrets', 'prompt', 'text', '*.apiKey', '*.password', '*.secrets'];

/** A URL anywhere in a string: scheme, optional user info, host, then path, query and fragment. */
const URL_IN_TEXT = /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/?#@"'<>]*@)?([^\s/?#"'<>]*)([^\s?#"'<>]*)(?:[?#][^\s"'<>]*)?/gi;

/**
 * Every URL in `text` reduced to its origin and path: query strings and fragments (tokens,
 * signed links) and user info (passwords) never reach a log line.
 */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, (_m, scheme: string, host: string, path: string) => `${scheme}${host}${path}`);
}

function redactDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrls(value);
  if (depth > 8 || value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value instanceof Date || value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v, depth + 1);
  return out;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'browser-agent' },
      redact: { paths: REDACT, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      // URLs in any field, an error's message and stack included, are logged as origin + path.
      formatters: { log: (obj) => redactDeep(obj) as Record<string, unknown> },
      serializers: { err: (err: Error) => redactDeep(pino.stdSerializers.err(err)) },
      hooks: {
        logMethod(args, method) {
          // The message itself ("navigated to https://...?token=...") too.
          const i = args.findIndex((a) => typeof a === 'string');
          if (i >= 0) args[i] = redactUrls(args[i] as string);
          return method.apply(this, args);
        },
      },
    },
    destination,
  );
}
