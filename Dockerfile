# Build stage: better-sqlite3 compiles from source, so the full image with a toolchain is used.
FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bin ./bin
# The build bundles the daemon (docs/operations.md, Start-up).
COPY scripts ./scripts
COPY public ./public
COPY dashboard ./dashboard
COPY libexec ./libexec
COPY examples ./examples
RUN npm ci && npm prune --omit=dev

# Runtime: slim image, tini as PID 1 (it reaps orphaned workers' zombies), non-root user.
FROM node:24-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY examples ./examples
COPY libexec ./libexec
# Container mode: nothing outlives the daemon here, so a stop ends the workers itself and their
# runs are recorded `interrupted` (re-run, not failed). Mount your own config over this file,
# keeping "shutdown": {"workers": "terminate"}.
COPY contrib/container.json /etc/gatehouse/gatehouse.json
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
# Listening beyond loopback requires an API token: pass GATEHOUSE_TOKEN at `docker run`.
ENV GATEHOUSE_DATA_DIR=/data GATEHOUSE_HOST=0.0.0.0 GATEHOUSE_PORT=8787 \
    GATEHOUSE_CONFIG=/etc/gatehouse/gatehouse.json
EXPOSE 8787
# Asks /health on the port the instance actually bound (from its pid file).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s \
  CMD ["node", "libexec/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "bin/gatehouse.js", "run"]
