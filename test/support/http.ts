import { checkResponse } from './openapi-check';

/**
 * A tiny JSON client for the API, as a user's code would call it. Every answer is checked
 * against the OpenAPI document (method, path and status described, JSON body matching its
 * schema); a mismatch throws, which fails the test.
 */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function api<T = any>(baseUrl: string, method: string, path: string, opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) {
    body = opts.rawBody;
    headers['content-type'] ??= 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: tests assert on that */
  }
  const type = res.headers.get('content-type') ?? '';
  checkResponse(method, `${baseUrl}${path}`, res.status, type.includes('application/json') ? parsed : undefined, type);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export async function waitFor<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs: number, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
