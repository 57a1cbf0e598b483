import path from 'node:path';
import { Router } from 'express';
import type { Config } from '../../config';
import { NotFoundError } from '../../contracts/errors';
import { buildOpenApiDocument } from '../openapi/document';

/** The reference page's files, served from the swagger-ui-dist package (no CDN). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const ASSET_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Browser agent service: API reference</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#reference', deepLinking: true, persistAuthorization: true });
</script>
</body>
</html>
`;

/** GET /openapi.json (built once from the zod schemas) and the reference page at GET /docs. */
export function docsRoutes(deps: { config: Config }): Router {
  const router = Router();
  const document = JSON.stringify(buildOpenApiDocument(deps.config.PUBLIC_BASE_URL));
  router.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(document);
  });
  router.get('/docs', (_req, res) => {
    res.type('html').send(PAGE);
  });
  router.get('/docs/assets/:file', (req, res) => {
    const type = ASSETS[req.params.file];
    if (!type) throw new NotFoundError('NOT_FOUND', 'No such asset');
    res.type(type).set('cache-control', 'public, max-age=86400').sendFile(path.join(ASSET_DIR, req.params.file));
  });
  return router;
}
