/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the signed content is
 * `<webhook-id>.<webhook-timestamp>.<body>`, the key is the base64 part of the user's
 * `whsec_` secret, the header value is `v1,<base64 HMAC-SHA256>`; several signatures
 * (current and previous secret after a rotation) are separated by spaces.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** One `v1,<signature>` entry. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
}

/** The `webhook-signature` header: one signature per secret, space-separated. */
export function signatureHeader(secrets: string[], id: string, timestamp: number, body: string): string {
  return secrets.map((s) => sign(s, id, timestamp, body)).join(' ');
}

/** The headers of one delivery attempt; the timestamp is the attempt's, the id the delivery's. */
export function deliveryHeaders(opts: { deliveryId: string; body: string; secrets: string[]; auth?: string; now?: number }): Record<string, string> {
  const timestamp = Math.floor((opts.now ?? Date.now()) / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'browser-agent-service-webhooks/1',
    'webhook-id': opts.deliveryId,
    'webhook-timestamp': String(timestamp),
    'x-delivery-id': opts.deliveryId,
  };
  if (opts.secrets.length) headers['webhook-signature'] = signatureHeader(opts.secrets, opts.deliveryId, timestamp, opts.body);
  if (opts.auth) headers.authorization = opts.auth;
  return headers;
}
