# syntax=docker/dockerfile:1
# Multi-stage image of the Fleet Operations API: compiled JavaScript on plain `node`, production dependencies
# only, code owned by root and read-only to the unprivileged `node` user, health-checked.
# What the runtime stage contains is runtime-files.txt plus `npm ci --omit=dev`, assembled by
# scripts/stage-runtime.mjs; CI runs the same script and starts the result (scripts/verify-image.mjs).
# Current Node.js LTS (26, active LTS since October 2026); override with --build-arg NODE_IMAGE=... to pin another.
ARG NODE_IMAGE=node:26-bookworm-slim

# 1. Build: full install (the TypeScript compiler and the Prisma generator are dev-time tools), generate the
#    Prisma client, compile src/ to dist/, then stage the runtime tree in /runtime.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund --strict-allow-scripts
COPY . .
RUN npm run build
RUN --mount=type=cache,target=/root/.npm node scripts/stage-runtime.mjs --install /runtime

# 2. Runtime.
FROM ${NODE_IMAGE} AS runtime
ARG GIT_COMMIT=unknown
ARG GIT_BRANCH=unknown
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    GIT_COMMIT=${GIT_COMMIT} \
    GIT_BRANCH=${GIT_BRANCH}
WORKDIR /app
COPY --from=build /runtime/ ./
# /data belongs to the app user, so a volume mounted there (docker run -v fleet-data:/data) is writable. No
# VOLUME line: on PostgreSQL nothing is written there, and an anonymous volume per container would be left
# behind by every replaced container. The embedded database (no DATABASE_URL) needs a mounted volume to last.
# /secrets likewise: the Compose file mounts a named volume there for SECRETS_ENCRYPTION_KEYS_FILE (a new named
# volume takes this directory's owner, so the first replica can create the key file in it), and /data/attachments
# for the shared attachments volume.
RUN mkdir -p /data/attachments /secrets && chown node:node /data /data/attachments /secrets && chmod 700 /secrets
USER node
EXPOSE 3000
# Readiness: /api/v1/health pings the database (503 when it cannot).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Migrations run at start-up under a PostgreSQL advisory lock, so replicas may start together.
# SIGTERM drains (readiness 503 for SHUTDOWN_DRAIN_MS, while a load balancer moves off), then in-flight requests
# and the current dispatch tick finish before exit (node is PID 1 and handles it).
# Admin CLI: docker compose run --rm api node dist/cli/admin.js quickstart
CMD ["node", "dist/main.js"]
