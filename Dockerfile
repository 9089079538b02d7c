# syntax=docker/dockerfile:1
# The colline consumer, and the colline CLI with the lineage explorer (/colline ui, its page built
# by the web stage): static Go binaries on distroless, running as non-root.
#
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" -t colline-consumer .
#
# The go build line below must stay identical to the Makefile's `consumer` target: `make docker-check`
# compares the two (and lints this file with hadolint).
ARG GO_VERSION=1.26.8
ARG NODE_VERSION=20

# The explorer's page, as `make ui-bundle` builds it: npm ci from the lockfile, tsc, esbuild.
FROM --platform=$BUILDPLATFORM node:${NODE_VERSION}-bookworm-slim AS web
WORKDIR /src/ui/web
COPY ui/web/package.json ui/web/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY ui/web/ ./
RUN npm run --silent build

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
# .dockerignore keeps the listener, docs, deploy and test data out of the context.
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/colline-consumer ./cmd/consumer
# The CLI embeds the page the web stage built (without it, a placeholder: ui/bundle.go).
COPY --from=web /src/ui/bundle/app ./ui/bundle/app
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/colline ./cmd/colline

# Pin by digest in a release pipeline (static-debian12:nonroot@sha256:...).
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=dev
LABEL org.opencontainers.image.title="colline-consumer" \
      org.opencontainers.image.description="colline: column-level lineage for Apache Spark, Kafka to Neo4j consumer" \
      org.opencontainers.image.version="${VERSION}"
COPY --from=build /out/colline-consumer /colline-consumer
# `colline ui` (the Helm chart's ui.enabled), explain, replay, upgrade
COPY --from=build /out/colline /colline
# 65532 is distroless's nonroot user; the binary writes nothing to disk (readOnlyRootFilesystem works).
USER 65532:65532
# /metrics, /healthz and /readyz (COLLINE_HTTP_ADDR, default :9090); the explorer's port is set by
# COLLINE_UI_ADDR (the chart's ui.port, 8080)
EXPOSE 9090
ENTRYPOINT ["/colline-consumer"]
