# syntax=docker/dockerfile:1
# llmprobe: a small static, non-root image.
#   docker build -t llmprobe .
#   docker run --rm -p 9464:9464 -v $PWD/config:/etc/llmprobe:ro llmprobe run --config /etc/llmprobe/simulator.yaml

# Build stage: the same command CI uses for the release binary.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags="-s -w" -o /out/llmprobe ./cmd/llmprobe

# Runtime stage: distroless static, nonroot (uid 65532), no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/llmprobe /usr/local/bin/llmprobe
USER nonroot:nonroot
# Admin HTTP: /metrics, health, status page (set admin.listen to 0.0.0.0:9464 in containers).
EXPOSE 9464
ENTRYPOINT ["/usr/local/bin/llmprobe"]
CMD ["run", "--config", "/etc/llmprobe/config.yaml"]
