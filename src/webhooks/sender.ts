/**
 * One HTTP attempt of a webhook delivery and what its outcome means: 2xx delivered;
 * 4xx other than 408 and 429 final (the receiver refuses it, repeating will not help);
 * anything else (5xx, 408, 429, redirects, network errors, timeouts) worth retrying. A
 * destination the network guard refuses is final and never connected to. The recorded error
 * never carries the receiver's answer (a receiver must not be able to read back what an
 * internal address said).
 */
import { deliveryHeaders } from '../contracts/webhook-signing';
import { isGuardRefusal } from '../net/network-guard';

export interface SendRequest {
  url: string;
  auth?: string;
  deliveryId: string;
  body: string;
  secrets: string[];
  timeoutMs: number;
}

export interface SendResult {
  outcome: 'delivered' | 'final' | 'retry';
  statusCode: number | null;
  error: string | null;
  /** From a 429/503 Retry-After header, for the next attempt's delay. */
  retryAfterMs?: number;
  durationMs: number;
}

export function classifyStatus(status: number): SendResult['outcome'] {
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'final';
  return 'retry';
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export async function sendWebhook(req: SendRequest, fetchImpl: typeof fetch = fetch): Promise<SendResult> {
  const started = Date.now();
  const headers = deliveryHeaders({ deliveryId: req.deliveryId, body: req.body, secrets: req.secrets, auth: req.auth, now: started });
  try {
    const res = await fetchImpl(req.url, { method: 'POST', headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(req.timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    const outcome = classifyStatus(res.status);
    return {
      outcome,
      statusCode: res.status,
      error: outcome === 'delivered' ? null : `HTTP ${res.status}`,
      retryAfterMs: res.status === 429 || res.status === 503 ? retryAfterMs(res.headers.get('retry-after')) : undefined,
      durationMs: Date.now() - started,
    };
  } catch (err) {
    if (isGuardRefusal(err)) return { outcome: 'final', statusCode: null, error: `Not sent: ${err.message}`, durationMs: Date.now() - started };
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const reason = e.name === 'TimeoutError' ? `no answer within ${req.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
    return { outcome: 'retry', statusCode: null, error: `Request failed: ${reason}`, durationMs: Date.now() - started };
  }
}
