/**
 * A typed client of the service, generated from its OpenAPI document
 * (`npm run openapi:client` rewrites openapi.json and schema.d.ts).
 *
 *   const api = createServiceClient('http://localhost:3000', 'bas_...');
 *   const { data, error } = await api.POST('/start/run-task', { body: { task: { prompt: 'Title of example.com?' } } });
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema';

export type { components, operations, paths } from './schema';

export function createServiceClient(baseUrl: string, apiKey?: string, options: Omit<ClientOptions, 'baseUrl'> = {}): Client<paths> {
  return createClient<paths>({ ...options, baseUrl, headers: { ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}), ...(options.headers as Record<string, string> | undefined) } });
}
