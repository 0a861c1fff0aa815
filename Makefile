# debussy — the two commands the README promises, plus benchmarks.
GO ?= go

.PHONY: test test-latest demo build install bench vet fuzz chaos image release-snapshot

build:
	$(GO) build -o bin/debussy .

# From a clone: the module is not published, so `go install …@latest` cannot
# fetch it. go install puts the binary in $GOBIN, else $(go env GOPATH)/bin.
install:
	$(GO) install .

# The image of the Dockerfile (debussy, the pinned claude CLI, git; a
# non-root user), built with whichever builder is here: docker (when its
# daemon answers), podman or buildah; scripts/image.sh says which flags
# (IMAGE names it, IMAGE_BUILDER picks a builder, IMAGE_BUILD_FLAGS adds
# flags, e.g. --isolation chroot --storage-driver vfs without a daemon).
IMAGE ?= debussy:dev
image:
	IMAGE=$(IMAGE) bash scripts/image.sh

# The release artifacts of HEAD as a snapshot, into dist/ (goreleaser,
# pinned in scripts/release.sh): an archive per platform (linux and darwin,
# amd64 and arm64), checksums.txt (sha256sum -c), a CycloneDX SBOM beside
# each archive, every binary stamped v<next>-snapshot-<commit>. Publishes
# nothing; the release workflow makes the real one on a tag.
release-snapshot:
	bash scripts/release.sh snapshot

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi
	@# A merge once committed its conflict markers into the README.
	@if git grep -nE '^(<<<<<<<|>>>>>>>) ' -- . ; then echo "conflict markers committed"; exit 1; fi

# The test suite: vet + every package with the race detector (where it can
# find something: scripts/test.sh says where it is off), including the
# end-to-end tests that drive the real claude CLI against the fake API, those
# of what the CLI does again on npm's current `latest` CLI (users run that
# one, and it differs: default model and window, where hook context lands),
# and their core on the oldest supported CLI. scripts/test.sh installs a
# missing CLI (npm), runs the packages and each end-to-end test on each CLI
# as jobs of one queue, and fails if any job fails.
# -count=1: the e2e tests build debussy themselves, so a cached pass could hide
# a change to the binary.
test: vet
	GO=$(GO) bash scripts/test.sh

# The end-to-end tests alone on npm's latest CLI. DEBUSSY_TEST_SECOND_CLI runs
# only the tests of what the CLI does (claudetest.CLISensitive); the others
# skip (see scripts/test.sh).
test-latest:
	DEBUSSY_TEST_CLAUDE=$${DEBUSSY_TEST_CLAUDE_LATEST:-$$(bash scripts/install-claude.sh latest | tail -n1)} \
		DEBUSSY_TEST_SECOND_CLI=1 $(GO) test -count=1 -timeout 15m ./tests/

# The main job on the built-in demo: the real claude CLI against the fake API,
# in a fresh temporary git repository. No account needed. Your own plan:
# make demo PLAN=path/MASTER_PLAN.md SCRIPT=path/script.json [CONFIG=.debussy.yaml]
# (docs/fake-api.md says what a script holds).
demo:
	PLAN="$(PLAN)" SCRIPT="$(SCRIPT)" CONFIG="$(CONFIG)" bash scripts/demo.sh

bench:
	bash scripts/bench-stream.sh
	bash scripts/bench-commit.sh
	bash scripts/bench-parallel.sh

# Each parser's fuzz target for a fixed number of executions (go test runs one
# target at a time), about 2–3 s each on an idle 2-core machine (58 s of CPU in all at twice
# these counts; CI runs it beside make test, so its CPU is CI's time). A count, not a
# duration: with -fuzztime 8s, go1.26's coordinator can fail a target with a
# bare "context deadline exceeded" and no crasher when the deadline races a
# busy worker (golang/go#75804, fixed in go1.27); a count has no deadline.
# New inputs are minimized for at most 1 s (the default, 60 s, stalls short runs).
# Crashers land in the package's testdata/fuzz/ and run as regression tests.
# FUZZSCALE multiplies every count (make fuzz FUZZSCALE=20 for a longer look).
FUZZSCALE ?= 1
FUZZ_TARGETS = ./plans/:FuzzLoad:1000 ./config/:FuzzLoad:1000 ./runner/:FuzzParse:50000 \
	./gitcommit/:FuzzParseTrailers:20000 ./checkpoint/:FuzzCheckpoint:200
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest#*:} * $(FUZZSCALE) )); \
		echo "fuzz $$pkg $$name ($${n}x)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $${n}x -fuzzminimizetime 1s -parallel 2 $$pkg; \
	done

# Fault injection (tests/chaos_e2e_test.go): CHAOS_RUNS seeded runs of a
# three-phase plan on the real CLI, each with one fault at a random moment
# (kill -9 or TERM of debussy, kill -9 of claude or of a tool, index.lock
# held, the stream cut, a 529 burst, a 401, a full disk, a second run), then
# at most two reruns; every run checks that nothing the agent wrote was lost.
# `make test` runs a small fixed subset. The report, each failure's replay
# line and its errors are printed; the whole log is in CHAOS_LOG. The disk
# fault mounts a tmpfs, so it needs root (it is skipped otherwise).
CHAOS_RUNS ?= 30
CHAOS_SEED ?= $(shell date +%s)
CHAOS_PARALLEL ?= 2
CHAOS_LOG ?= $(or $(TMPDIR),/tmp)/debussy-chaos.log
chaos:
	@echo "chaos: $(CHAOS_RUNS) runs, seed $(CHAOS_SEED), $(CHAOS_PARALLEL) at a time; log: $(CHAOS_LOG)"
	@DEBUSSY_TEST_CLAUDE=$${DEBUSSY_TEST_CLAUDE:-$$(bash scripts/install-claude.sh | tail -n1)} \
		CHAOS_RUNS=$(CHAOS_RUNS) CHAOS_SEED=$(CHAOS_SEED) \
		$(GO) test -race -count=1 -v -parallel $(CHAOS_PARALLEL) -timeout 150m -run '^TestChaos$$' ./tests/ > $(CHAOS_LOG) 2>&1; \
		rc=$$?; \
		grep -E '_test\.go:[0-9]+: ' $(CHAOS_LOG) | grep -vE '→ exit|chaos run:|chaos: ' | grep -vE '^\s+chaos_e2e_test\.go:[0-9]+: $$'; \
		grep -E '^\s*(chaos report:|chaos   )' $(CHAOS_LOG); \
		grep -E '^(--- FAIL|ok|FAIL)' $(CHAOS_LOG); \
		exit $$rc
