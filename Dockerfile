# syntax=docker/dockerfile:1
# The gateway on Node 24, as a non-root user. The image runs TypeScript directly on Node 24's
# type stripping, like `npm start`: no build stage output beyond the installed dependencies.

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only; the image's own Node 24 replaces the `node` devDependency.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=4000 HOST=0.0.0.0
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY schema ./schema
# Without UPSTREAM_URL the gateway embeds the reference service, whose database defaults to
# data/petstore.db under /app: the image's user must be able to create it. A volume mounted at
# /app/data starts with this owner too.
RUN install -d -o node -g node /app/data
USER node
EXPOSE 4000
HEALTHCHECK --interval=10s --timeout=2s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node directly (not npm) so SIGTERM reaches the process and the graceful drain runs; the same V8
# flags as `npm start` (a 16 MB young generation: docs/performance.md, "Memory").
CMD ["node", "--max-semi-space-size=16", "src/main.ts"]
