# syntax=docker/dockerfile:1
# Warden in a container (docs/deployment.md, "Docker and Compose"):
#   docker build -t warden .
#   docker run -p 8080:8080 -e WARDEN_DATABASE_URL=postgres://… warden
# Three stages: everything built with every dependency, then the server's production dependencies
# alone (the lockfile's versions, better-sqlite3 compiled), cut to what the server runs
# (deploy/runtime-tree.mjs), then a slim image that runs as `node` with only those and the compiled
# server.
ARG NODE_VERSION=20

FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /src
COPY . .
# `npm install`, not `npm ci`, as CI does (.ci/run); the committed lockfile fixes the versions.
# Its `prepare` script builds the server, the console (into packages/server/assets) and the packages.
RUN npm install --no-audit --no-fund
# What the server package ships of its build (its `files`): no TypeScript declarations.
RUN find packages/server/dist \( -name '*.d.ts' -o -name '*.d.ts.map' -o -name '.tsbuildinfo' \) -delete

FROM node:${NODE_VERSION}-bookworm AS deps
WORKDIR /opt/warden
COPY package.json package-lock.json ./
COPY packages/server/package.json packages/server/
COPY packages/client/package.json packages/client/
COPY packages/browser/package.json packages/browser/
COPY packages/console/package.json packages/console/
COPY packages/tools/package.json packages/tools/
COPY examples/signup/package.json examples/signup/
COPY examples/realtools/package.json examples/realtools/
COPY examples/express/package.json examples/express/
COPY examples/fastify/package.json examples/fastify/
COPY examples/hono/package.json examples/hono/
COPY deploy/runtime-tree.mjs deploy/
# Only @warden/server's production dependencies; scripts off (the root's `prepare` builds with dev
# tools), then better-sqlite3's own install script, which compiles its native module. npm's workspace
# install also brings what the lockfile's production tree holds for the other workspaces (an optional
# peer such as stripe's @types/node): runtime-tree.mjs keeps only the packages the server reaches,
# without their TypeScript declarations, sources and other platforms' binaries.
RUN npm install --omit=dev --workspace @warden/server --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3 \
  && mkdir -p packages/server/node_modules \
  && node deploy/runtime-tree.mjs /opt/warden

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    WARDEN_DATABASE_URL=sqlite:/var/lib/warden/warden.db \
    WARDEN_DEGRADED_SPOOL_DIR=/var/lib/warden/spool
WORKDIR /opt/warden
COPY --from=deps /opt/warden/node_modules ./node_modules
COPY --from=deps /opt/warden/packages/server/node_modules ./packages/server/node_modules
COPY --from=build /src/packages/server/package.json ./packages/server/
COPY --from=build /src/packages/server/bin ./packages/server/bin
COPY --from=build /src/packages/server/dist ./packages/server/dist
COPY --from=build /src/packages/server/assets ./packages/server/assets
RUN ln -s /opt/warden/packages/server/bin/warden.js /usr/local/bin/warden \
  && mkdir -p /var/lib/warden \
  && chown node:node /var/lib/warden
# The SQLite database (the default store) and the degraded-event spool outlive the container.
VOLUME ["/var/lib/warden"]
WORKDIR /var/lib/warden
USER node
EXPOSE 8080
# /healthz: the process is up (restart it when this fails). Load balancers use /readyz instead, which
# stays 200 while the store is down so callers get verify's degraded answer.
HEALTHCHECK --interval=15s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node is PID 1: `warden serve` handles SIGTERM itself (drain, then exit 0).
ENTRYPOINT ["warden"]
CMD ["serve"]
