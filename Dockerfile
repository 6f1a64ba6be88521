# syntax=docker/dockerfile:1
# healthprobe-operator image: TypeScript compiled in a build stage, production dependencies
# installed in a clean stage, and a distroless Node 20 runtime running as uid 65532.

ARG NODE_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
# Scripts are skipped: the postinstall only unpacks kubectl and helm for tests, which the build does not need.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY operator/src ./operator/src
# tsconfig.build.json has rootDir operator/src: operator/src/main.ts becomes dist/main.js.
RUN npm run build && test -f dist/main.js

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
COPY hack/install-tools.mjs ./hack/install-tools.mjs
# Production dependencies only; the postinstall finds no dev package and exits at once.
RUN npm ci --omit=dev && npm cache clean --force

FROM ${RUNTIME_IMAGE}
LABEL org.opencontainers.image.title="healthprobe-operator" \
      org.opencontainers.image.description="Probes pods over HTTP(S), drains unhealthy ones from EndpointSlices and replaces pods that stay unhealthy, within budgets." \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
COPY --from=deps /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# package.json also gives the version in the probes' User-Agent (found by walking up from dist/).
COPY package.json ./
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/nodejs/bin/node", "dist/main.js"]
