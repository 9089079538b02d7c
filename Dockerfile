# syntax=docker/dockerfile:1
# The colline consumer, and the colline CLI with the lineage explorer (/colline ui, its page built
# by the web stage): static Go binaries FROM scratch, running as non-root, for machines that reach
# registries. Without one, `make image` builds the same image with podman (deploy/image/build).
#
#   docker build --build-arg VERSION="$(dev/version)" --build-arg REVISION="$(git rev-parse HEAD)" \
#     --build-arg SOURCE_DATE_EPOCH="$(git log -1 --format=%ct)" -t ghcr.io/colline/colline-consumer:"$(dev/version)" .
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

# The image's tree, as deploy/image/rootfs makes it for `make image` (podman, no registry): the
# binaries, CA certificates and tzdata from Debian's packages, a passwd entry.
FROM debian:bookworm-slim AS rootfs
WORKDIR /debs
# hadolint ignore=DL3008,DL3009
RUN apt-get update && apt-get download ca-certificates tzdata
COPY deploy/image/rootfs /usr/local/bin/colline-rootfs
COPY --from=build /out/colline-consumer /out/colline /out/
ARG SOURCE_DATE_EPOCH=0
RUN SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH} colline-rootfs /rootfs /out /debs

# From here on, deploy/image/Containerfile line for line but for where the tree comes from
# (deploy/image_test.go compares them).
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
LABEL org.opencontainers.image.title="colline-consumer" \
      org.opencontainers.image.description="colline: column-level lineage for Apache Spark, Kafka to Neo4j consumer, CLI and explorer" \
      org.opencontainers.image.source="https://github.com/colline/colline" \
      org.opencontainers.image.url="https://github.com/colline/colline/blob/main/docs/install.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
COPY --from=rootfs /rootfs/ /
# 65532 is nonroot in the image's /etc/passwd; the consumer writes nothing to disk
# (readOnlyRootFilesystem works).
USER 65532:65532
# /metrics, /healthz and /readyz (COLLINE_HTTP_ADDR, default :9090); the explorer's port is set by
# COLLINE_UI_ADDR (the chart's ui.port, 8080)
EXPOSE 9090
ENTRYPOINT ["/colline-consumer"]
