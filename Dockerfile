# syntax=docker/dockerfile:1
# Every controller's image, from this one Dockerfile: --build-arg CONTROLLER names the package under
# packages/. The build context is the repository root (a controller is built together with the
# workspace packages it imports):
#
#   docker build --build-arg CONTROLLER=at-scheduler --build-arg VERSION=0.1.0 \
#     -t ghcr.io/loopwright/at-scheduler:0.1.0 .
#
# The runtime stage ships what scripts/bundle.sh produces and nothing else: the controller bundled by
# esbuild into dist/main.js, its package.json and its dependencies' licenses, no node_modules.
# e2e/src/bundle.test.ts runs that same bundle with Node 24 against a real API server, and
# packages/cluster/src/images builds the runtime stage from this file without Docker, so the image's
# contents are tested without a Docker engine.
#
# The base images are pinned by digest, the tag kept beside it for Renovate, which updates the digest
# (renovate.json, pinDigests). The stand-ins the tests build match them by name:tag.

# The controller to build: at-scheduler, cloud-node, mailgun-cluster (scripts/controllers.ts lists them).
# Declared before the first FROM so that each stage that redeclares it sees the value, as BuildKit scopes
# ARGs.
ARG CONTROLLER

# The build stage runs on the builder's own platform even for a multi-platform image: the bundle is plain
# JavaScript without native addons, so one build serves every target and needs no emulation.
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim@sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6 AS build
ARG CONTROLLER
# PNPM_HOME puts pnpm's store at /pnpm/store, the cache mount below: dependencies are downloaded once per
# builder. CI=true: pnpm never waits for a confirmation (there is no terminal).
ENV PNPM_HOME=/pnpm CI=true
WORKDIR /src
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
# pnpm at exactly the version package.json's packageManager pins, from npm as scripts/setup.sh does it.
RUN pnpm_version=$(sed -n 's/.*"packageManager": "pnpm@\([^"]*\)".*/\1/p' package.json) \
    && test -n "$pnpm_version" \
    && npm install --global --no-fund --no-audit "pnpm@$pnpm_version"
# The lockfile alone decides what is downloaded: this layer is reused until a dependency changes.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch
COPY . .
# Install (from the store on the cache mount), then bundle: esbuild reads the workspace's sources and the
# installed dependencies and writes /bundle. A missing CONTROLLER fails here, before anything is bundled.
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
    test -n "${CONTROLLER}" \
    && pnpm install --frozen-lockfile --offline \
    && ./scripts/bundle.sh ${CONTROLLER} /bundle

# Distroless Node 24: no shell, no package manager, and its nonroot user is 65532, the UID/GID the chart
# runs the container as (runAsUser/runAsGroup 65532, readOnlyRootFilesystem).
FROM gcr.io/distroless/nodejs24-debian12:nonroot@sha256:14d42e2511532589a7c7e01a753667a74fcc96266e137e8125006b87b0c32d0a
ARG CONTROLLER
# The controller's one-line description, its package.json "description" (the release workflow and the
# tests' executor pass it).
ARG DESCRIPTION=""
ARG VERSION=dev
ARG SOURCE=https://github.com/loopwright/loopwright
LABEL org.opencontainers.image.title="${CONTROLLER}" \
      org.opencontainers.image.description="${DESCRIPTION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}"
# The convention dependencies look for; Loopwright itself does not read it.
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and so read-only to the process: the controller never writes its own files (the chart
# mounts an emptyDir on /tmp for what must be written).
COPY --from=build /bundle /app
# Numeric, so the kubelet can verify runAsNonRoot even where the pod sets no runAsUser.
USER 65532:65532
# The defaults of --metrics-bind-address (/metrics) and --health-probe-bind-address (/healthz, /readyz).
EXPOSE 8080
EXPOSE 8081
# No HEALTHCHECK: there is no shell or HTTP client to run one; Kubernetes probes /healthz and /readyz.
# The chart sets no command or args: this is the whole command line (the bundle test and the footprint
# bench run the bundle with exactly these arguments). No --enable-source-maps: it parses the maps at
# start-up (+30 MB); set NODE_OPTIONS=--enable-source-maps in the pod to map a stack trace.
ENTRYPOINT ["/nodejs/bin/node", "dist/main.js"]
