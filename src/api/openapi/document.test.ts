import { execFileSync } from 'node:child_process';
import { createApp } from '../app';
import { loadConfig } from '../../config';
import { buildOpenApiDocument } from './document';

/** Every method and path the Express app serves, read from its router (no server, no I/O). */
function appRoutes(): string[] {
  // Dependencies are never called while the routes are declared.
  const stub: any = new Proxy(function () {}, { get: (_t, p) => (p === 'then' ? undefined : stub), apply: () => stub, construct: () => stub });
  const { app } = createApp({ config: loadConfig({}), logger: stub, store: stub, temporal: stub, redis: stub, registry: stub });
  const out: string[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      if (layer.route) for (const m of Object.keys(layer.route.methods)) out.push(`${m.toUpperCase()} ${String(layer.route.path).replace(/:(\w+)/g, '{$1}')}`);
      else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as any).router.stack);
  return [...new Set(out)].sort();
}

/** Every method and path whose handlers include a rate limiter (the middleware `rateLimit` makes), read from the router. */
function rateLimitedRoutes(): string[] {
  const stub: any = new Proxy(function () {}, { get: (_t, p) => (p === 'then' ? undefined : stub), apply: () => stub, construct: () => stub });
  const { app } = createApp({ config: loadConfig({}), logger: stub, store: stub, temporal: stub, redis: stub, registry: stub });
  const out: string[] = [];
  const walk = (stack: any[], before: any[]) => {
    const seen = [...before];
    for (const layer of stack) {
      if (layer.route) {
        const concrete = String(layer.route.path).replace(/:(\w+)/g, 'x');
        const limited = seen.some((l) => l.handle?.name === 'rateLimited' && l.match(concrete)) || layer.route.stack.some((l: any) => l.handle?.name === 'rateLimited');
        if (limited) for (const m of Object.keys(layer.route.methods)) out.push(`${m.toUpperCase()} ${String(layer.route.path).replace(/:(\w+)/g, '{$1}')}`);
      } else if (layer.handle?.stack) walk(layer.handle.stack, seen);
      else seen.push(layer);
    }
  };
  walk((app as any).router.stack, []);
  return [...new Set(out)].sort();
}

describe('the OpenAPI document', () => {
  const doc = buildOpenApiDocument('http://localhost:3000') as any;
  const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
    .flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();

  it('is a valid OpenAPI 3.1 document', () => {
    // The validator is an ES module; it runs in its own node process.
    const script = "import { Validator } from '@seriousme/openapi-schema-validator'; let s = ''; for await (const c of process.stdin) s += c; const r = await new Validator().validate(JSON.parse(s)); console.log(JSON.stringify({ valid: r.valid, errors: r.errors ?? [] }));";
    const result = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { input: JSON.stringify(doc), cwd: __dirname }).toString());
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('describes every route of the app, and nothing the app does not serve', () => {
    const routes = appRoutes();
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.filter((r) => !documented.includes(r))).toEqual([]);
    expect(documented.filter((r) => !routes.includes(r))).toEqual([]);
  });

  it('documents 429 wherever a rate limit applies', () => {
    const limited = rateLimitedRoutes();
    expect(limited).toEqual(expect.arrayContaining(['POST /start/run-task', 'GET /policies', 'GET /profiles/{id}/download', 'POST /environments/{id}/upload']));
    const undocumented = limited.filter((r) => {
      const [method, path] = r.split(' ');
      return !doc.paths[path]?.[method.toLowerCase()]?.responses['429'];
    });
    expect(undocumented).toEqual([]);
  });

  it('takes request bodies from the zod schemas that validate them', () => {
    const task = doc.components.schemas.RunTaskRequest.properties.task;
    // null is the field left out: the document takes it as the default.
    expect(task.properties.maxDuration).toMatchObject({ anyOf: [{ type: 'integer', minimum: 1000, maximum: 300000 }, { type: 'null' }], default: 300000 });
    expect(task.properties.outputType.anyOf[0].enum).toEqual(['text', 'structured_json', 'structured_csv']);
    expect(doc.components.schemas.ChatCompletionRequest.required).toEqual(['model', 'messages']);
    expect(doc.paths['/v1/chat/completions'].post.responses['422'].content['application/json'].schema.$ref).toBe('#/components/schemas/OpenAiError');
    expect(doc.paths['/environments'].get.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/task/{sessionId}/{taskId}'].get.security).toEqual([]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('the typed client', () => {
  it('was generated from the document the service serves (npm run openapi:client)', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const committed = require('../../../clients/typescript/openapi.json');
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument('http://localhost:3000'))));
  });
});
