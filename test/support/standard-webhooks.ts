import type { IncomingHttpHeaders } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** What a receiver does with the Standard Webhooks reference library: true when the delivery verifies with `secret`. */
export function verifiesWith(secret: string, body: string, headers: IncomingHttpHeaders | Record<string, string>): boolean {
  const pick = (name: string) => String(headers[name] ?? '');
  try {
    new Webhook(secret).verify(body, { 'webhook-id': pick('webhook-id'), 'webhook-timestamp': pick('webhook-timestamp'), 'webhook-signature': pick('webhook-signature') }, { jsonParse: false });
    return true;
  } catch {
    return false;
  }
}
