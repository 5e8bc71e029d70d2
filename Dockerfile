# syntax=docker/dockerfile:1
# Multi-stage image of the Fleet Operations API: production dependencies only, non-root, health-checked.
# Current Node.js LTS (26, active LTS since October 2026); override with --build-arg NODE_IMAGE=... to pin another.
ARG NODE_IMAGE=node:26-bookworm-slim

# 1. Full install to generate the Prisma client (generation needs the prisma CLI, a dev-time tool).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY scripts/prisma-generate.mjs ./scripts/prisma-generate.mjs
RUN node scripts/prisma-generate.mjs

# 2. Production dependencies only.
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

# 3. Runtime.
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
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json CHANGELOG.md openapi.yaml ./
COPY --chown=node:node prisma ./prisma
COPY --chown=node:node src ./src
COPY --from=build --chown=node:node /app/src/generated ./src/generated
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# Readiness: /api/v1/health pings the database (503 when it cannot).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Migrations run at start-up under a PostgreSQL advisory lock, so replicas may start together.
# SIGTERM drains in-flight requests and the current dispatch tick before exiting.
CMD ["node", "--import", "tsx", "src/main.ts"]
