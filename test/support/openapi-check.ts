import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Middleware } from 'openapi-fetch';
import document from '../../clients/typescript/openapi.json';

/**
 * Checks an answer of the service against the response schema that the OpenAPI document
 * gives for its method, path and status; throws with the differences.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: document.components } as object);

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
const paths = Object.keys(document.paths).map((p) => ({ p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`) }));

export function checkResponse(method: string, url: string, status: number, body: unknown): void {
  const pathname = new URL(url, 'http://x').pathname;
  const entry = paths.find((x) => x.re.test(pathname));
  if (!entry) throw new Error(`${method} ${pathname} is not in the OpenAPI document`);
  const op = (document.paths as any)[entry.p][method.toLowerCase()];
  if (!op) throw new Error(`${method} ${entry.p} is not in the OpenAPI document`);
  const response = op.responses[String(status)];
  if (!response) throw new Error(`${method} ${entry.p} answered ${status}, which the document does not list`);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return;
  const key = `${method} ${entry.p} ${status}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `doc${schema.$ref ?? ''}` });
    compiled.set(key, validate);
  }
  if (!validate(body)) throw new Error(`${key}: the answer does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
}

/** An openapi-fetch middleware that checks every JSON answer against the document. */
export const checkAgainstDocument: Middleware = {
  async onResponse({ request, response }) {
    if (!response.headers.get('content-type')?.includes('application/json')) return undefined;
    checkResponse(request.method, request.url, response.status, await response.clone().json());
    return undefined;
  },
};
