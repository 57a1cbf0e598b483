#!/usr/bin/env bash
# npm run openapi:client: writes the OpenAPI document the service serves to
# clients/typescript/openapi.json and regenerates the typed client's types from it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
npx tsc -p tsconfig.build.json
node -e "const { buildOpenApiDocument } = require('./dist/api/openapi/document'); process.stdout.write(JSON.stringify(buildOpenApiDocument('http://localhost:3000'), null, 2) + '\n')" > clients/typescript/openapi.json
npx openapi-typescript clients/typescript/openapi.json --default-non-nullable false -o clients/typescript/schema.d.ts
