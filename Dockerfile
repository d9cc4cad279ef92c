# syntax=docker/dockerfile:1
# llmprobe: a small static, non-root image. The version is the VERSION file's;
# pass the revision, branch and build date for `llmprobe --version`:
#   docker build -t llmprobe:$(cat VERSION) --build-arg REVISION=$(git rev-parse HEAD) --build-arg BRANCH=$(git rev-parse --abbrev-ref HEAD) .
# Try it (status page and /metrics on http://localhost:9464), probing the
# built-in simulator in the same process:
#   docker run --rm -p 9464:9464 llmprobe:$(cat VERSION) run --web.listen-address 0.0.0.0:9464
# or the simulator in a container of its own, with config/container.yaml:
#   docker network create llmprobe
#   docker run -d --rm --name sim --network llmprobe llmprobe:$(cat VERSION) sim --listen 0.0.0.0:8000
#   docker run --rm --network llmprobe -p 9464:9464 -v $PWD/config:/etc/llmprobe:ro llmprobe:$(cat VERSION) run --config.file /etc/llmprobe/container.yaml
# Build for several platforms and push (docs/deploy.md#build-and-push-the-image):
#   docker buildx build --platform linux/amd64,linux/arm64 -t $REGISTRY/llmprobe:$TAG --push .
# (deploy/dockerfile_test.go runs these examples' llmprobe commands.)

# Build stage: the same command CI uses for the release binary. Base images
# are pinned by version (deploy/version_test.go): Go to the patch release.
# The build stage runs on the builder's own platform and cross-compiles for
# the target's (buildx sets TARGETOS, TARGETARCH): no emulation.
FROM --platform=$BUILDPLATFORM golang:1.26.8 AS build
ARG TARGETOS
ARG TARGETARCH
ARG REVISION=""
ARG BRANCH=""
ARG BUILD_DATE=""
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w -X github.com/prometheus/common/version.Version=$(cat VERSION) -X github.com/prometheus/common/version.Revision=${REVISION} -X github.com/prometheus/common/version.Branch=${BRANCH} -X github.com/prometheus/common/version.BuildDate=${BUILD_DATE:-$(date -u +%Y%m%d-%H:%M:%S)}" -o /out/llmprobe ./cmd/llmprobe

# Runtime stage: distroless static on Debian 12, nonroot (uid 65532), no shell.
# Distroless publishes no version tags: the Debian release is in the image
# name; pin a digest (static-debian12:nonroot@sha256:…) for byte-identical
# rebuilds.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/llmprobe /usr/local/bin/llmprobe
USER nonroot:nonroot
# Admin HTTP: /metrics, health, status page (set admin.listen to 0.0.0.0:9464 in containers).
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/llmprobe"]
CMD ["run", "--config.file", "/etc/llmprobe/config.yaml"]
