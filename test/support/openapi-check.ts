import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Middleware } from 'openapi-fetch';
import document from '../../clients/typescript/openapi.json';

/**
 * Checks an answer of the service against the OpenAPI document (the committed copy, which
 * a unit test keeps equal to what the service serves): the method, path and status must be
 * described, and a JSON body must match the response schema given for them. Throws with
 * the method, path, status and the schema's complaints.
 *
 * Outside the document, only the answers every route shares are accepted: 404 NOT_FOUND
 * for a path the API does not have and 405 METHOD_NOT_ALLOWED for a method it does not
 * serve there, both in the error envelope.
 */
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'doc', components: document.components } as object);

const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
const paths = Object.keys(document.paths)
  .map((p) => ({ p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`), fixed: p.replace(/\{[^}]+\}/g, '').length }))
  // a literal segment wins over a parameter (/webhooks/secret/rotate before /webhooks/{id}/...)
  .sort((a, b) => b.fixed - a.fixed);

/** Paths the service serves on purpose outside the document (the document itself, its page). */
const UNDOCUMENTED = [/^\/openapi\.json$/, /^\/docs(\/.*)?$/, /^\/socket\.io\//];

function validator(key: string, schema: Record<string, unknown>) {
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(typeof schema.$ref === 'string' ? { $ref: `doc${schema.$ref}` } : schema);
    compiled.set(key, validate);
  }
  return validate;
}

function check(key: string, schema: Record<string, unknown>, body: unknown): void {
  const validate = validator(key, schema);
  if (!validate(body)) {
    const errors = (validate.errors ?? []).map((e) => `  ${e.instancePath || '(root)'} ${e.message}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`).join('\n');
    throw new Error(`${key}: the answer does not match the OpenAPI document:\n${errors}\nbody: ${String(JSON.stringify(body)).slice(0, 2000)}`);
  }
}

/** `body` is the parsed JSON body, or undefined when the answer is not JSON. */
export function checkResponse(method: string, url: string, status: number, body: unknown, contentType = 'application/json'): void {
  const pathname = new URL(url, 'http://x').pathname;
  if (UNDOCUMENTED.some((re) => re.test(pathname))) return;
  const entry = paths.find((x) => x.re.test(pathname));
  const op = entry && (document.paths as Record<string, Record<string, any>>)[entry.p][method.toLowerCase()];
  const json = contentType.includes('application/json');
  if (!entry || !op) {
    const expected = !entry ? [404, 'NOT_FOUND'] : [405, 'METHOD_NOT_ALLOWED'];
    const key = `${method} ${pathname} ${status}`;
    if (status !== expected[0] || !json || (body as { code?: string } | undefined)?.code !== expected[1]) {
      throw new Error(`${key}: ${!entry ? 'the path is' : 'the method is'} not in the OpenAPI document, yet the answer is not the ${expected[0]} ${expected[1]} error: ${String(JSON.stringify(body)).slice(0, 500)}`);
    }
    check(key, { $ref: '#/components/schemas/ErrorEnvelope' }, body);
    return;
  }
  const key = `${method} ${entry.p} ${status}`;
  const response = op.responses[String(status)];
  if (!response) throw new Error(`${key}: the OpenAPI document does not list status ${status} for this operation (it lists ${Object.keys(op.responses).join(', ')}): ${String(JSON.stringify(body)).slice(0, 500)}`);
  const schema = response.content?.['application/json']?.schema;
  if (!json) {
    const matches = (t: string) => t === '*/*' || contentType.startsWith(t) || (t.endsWith('/*') && contentType.startsWith(t.slice(0, -1)));
    if (response.content && !Object.keys(response.content).some(matches) && !(status === 304 || contentType === '')) {
      throw new Error(`${key}: answered ${contentType}, the OpenAPI document says ${Object.keys(response.content).join(' or ')}`);
    }
    return;
  }
  if (!schema) throw new Error(`${key}: answered JSON, the OpenAPI document says ${response.content ? Object.keys(response.content).join(' or ') : 'no body'}`);
  check(key, schema, body);
}

/** An openapi-fetch middleware that checks every answer against the document. */
export const checkAgainstDocument: Middleware = {
  async onResponse({ request, response }) {
    const type = response.headers.get('content-type') ?? '';
    checkResponse(request.method, request.url, response.status, type.includes('application/json') ? await response.clone().json() : undefined, type);
    return undefined;
  },
};
