# debussy's image: what a CI job (GitLab, Kubernetes, GitHub's container:)
# needs to run a phase — debussy, the pinned Claude Code CLI, git — as a
# non-root user, so claude's bypassPermissions needs no IS_SANDBOX.
#   make image                                  docker, podman or buildah, whichever is here
#   docker build -t debussy .                   the same by hand
# Releases are pushed as ghcr.io/debussy-dev/debussy:vX.Y.Z (docs/ci.md).
# Pins kept in step by a test (commands/image_test.go): the claude CLI of
# scripts/install-claude.sh, the user of the Kubernetes Jobs. Every stage is
# FROM one Debian base (bookworm-slim).

# debussy, compiled for the target platform on the build's own (no
# emulation). One base for every stage: Debian's Go from bookworm-backports
# (1.22) fetches the Go that go.mod names (GOTOOLCHAIN, from the Go module
# proxy, checked against the checksum database) on its first command.
FROM --platform=$BUILDPLATFORM docker.io/library/debian:bookworm-slim AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=
ARG DATE=
RUN echo 'deb http://deb.debian.org/debian bookworm-backports main' >/etc/apt/sources.list.d/bookworm-backports.list \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends -t bookworm-backports ca-certificates golang-1.22-go \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/go-1.22/bin:$PATH GOPATH=/go GOTOOLCHAIN=auto
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download && go version
COPY . .
# An unstamped VERSION ("dev") is a dev build: debussy version says so, and
# debussy pipeline asks for --image (no release image is named after it).
RUN set -eu; \
    stamp=; \
    if [ "$VERSION" != dev ]; then stamp="-X github.com/debussy-dev/debussy/internal/buildinfo.version=$VERSION"; fi; \
    CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH:-} go build -trimpath -buildvcs=false \
      -ldflags "-s -w $stamp -X github.com/debussy-dev/debussy/internal/buildinfo.commit=$COMMIT -X github.com/debussy-dev/debussy/internal/buildinfo.date=$DATE" \
      -o /out/debussy .

# The pinned Claude Code CLI. npm installs the native binary of the target
# platform (a single executable); only that is kept, not Node.js or npm.
FROM docker.io/library/debian:bookworm-slim AS claude
ARG CLAUDE_VERSION=2.1.197
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates nodejs npm \
 && rm -rf /var/lib/apt/lists/*
# Node.js reads its own CA list unless told to use the system's, where a
# build behind an intercepting proxy has the proxy's CA.
RUN NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    npm install --prefix /opt/claude-code --save-exact --no-audit --no-fund --loglevel=error \
      "@anthropic-ai/claude-code@${CLAUDE_VERSION}" \
 && cp -L /opt/claude-code/node_modules/.bin/claude /opt/claude \
 && /opt/claude --version

FROM docker.io/library/debian:bookworm-slim
ARG VERSION=dev
LABEL org.opencontainers.image.title=debussy \
      org.opencontainers.image.description="Run long multi-phase coding plans through Claude Code without losing work" \
      org.opencontainers.image.source=https://github.com/debussy-dev/debussy \
      org.opencontainers.image.version=$VERSION
# git for the ledger, openssh-client for ssh remotes, ca-certificates for
# https remotes and the API.
# The user (uid and gid 1000, the Kubernetes Jobs' runAsUser and fsGroup)
# has a home for claude's ~/.claude. safe.directory: a job's checkout or
# emptyDir is often root's (GitLab's builds dir, a Kubernetes volume), and
# git refuses a repository another user owns ("dubious ownership").
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ca-certificates git openssh-client \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 1000 debussy \
 && useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash debussy \
 && git config --system --add safe.directory '*'
COPY --from=claude /opt/claude /usr/local/bin/claude
COPY --from=build /out/debussy /usr/local/bin/debussy
# The CLI is pinned here: it must not update itself in a job.
ENV DISABLE_AUTOUPDATER=1
USER 1000:1000
WORKDIR /home/debussy
ENTRYPOINT ["debussy"]
