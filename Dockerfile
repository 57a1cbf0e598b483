# syntax=docker/dockerfile:1
# One image for every role of the service: ROLE=api | worker | all (see src/config.ts).
#   docker build -t browser-agent-service .
#   docker run --rm -e ROLE=api -e PAYLOAD_ENCRYPTION_KEY=... -p 3000:3000 browser-agent-service
# Chromium is Debian's package (CHROMIUM_PATH=/usr/bin/chromium); Playwright never downloads a browser.
# There is no HEALTHCHECK here because it depends on the role: the api's is GET /start/health
# (docker-compose.yml), a worker has no HTTP port.

# Node 20 (package.json engines: >=20.19); every dependency in the lock accepts it.
ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: install all dependencies, compile TypeScript, drop the dev dependencies -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
    && npm prune --omit=dev \
    && npm cache clean --force

# ---- llama-cpu: node-llama-cpp's CPU library of this platform alone (not its CUDA or Vulkan ones)
FROM build AS llama-cpu
RUN mkdir -p /llama \
    && for platform in linux-x64 linux-arm64; do \
         if [ -d "node_modules/@node-llama-cpp/$platform" ]; then cp -r "node_modules/@node-llama-cpp/$platform" /llama/; fi; \
       done \
    && ls /llama/*/bins/*/libllama* >/dev/null

# ---- model-tools: the one-shot that makes the local model's weights (docker-compose.yml,
# model-select): Debian's python3 and the llama.cpp library node-llama-cpp ships, no Chromium.
FROM ${NODE_IMAGE} AS model-tools
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=llama-cpu /llama ./node_modules/@node-llama-cpp
# scripts/ is mounted at /app/scripts by the service (as for model-fetch).

# ---- runtime: Node, Debian's Chromium, tini as PID 1, unprivileged user --------------------------
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
       chromium \
       fonts-liberation \
       tini \
       ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /data \
    && chown node:node /data

ENV NODE_ENV=production \
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
    CHROMIUM_PATH=/usr/bin/chromium \
    CHROMIUM_SANDBOX=true \
    DATA_DIR=/data \
    PORT=3000

WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist

# The image's built-in unprivileged user (uid 1000); /data is its writable state directory.
# Chromium runs with its sandbox on (CHROMIUM_SANDBOX=true); see the worker service in
# docker-compose.yml for what the container needs for it.
USER node
EXPOSE 3000

# tini is PID 1: it forwards SIGTERM to node (which drains its sessions) and reaps Chromium's
# zombie processes. Give workers a long stop timeout (compose stop_grace_period, docker stop -t).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
