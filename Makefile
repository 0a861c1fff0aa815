# debussy — the two commands the README promises, plus benchmarks.
GO ?= go

.PHONY: test demo build install bench vet

build:
	$(GO) build -o bin/debussy .

# From a clone: the module is not published, so `go install …@latest` cannot
# fetch it. go install puts the binary in $GOBIN, else $(go env GOPATH)/bin.
install:
	$(GO) install .

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi

# The test suite: vet + every package with the race detector, including the
# end-to-end tests that drive the real claude CLI against the fake API.
# -count=1: the e2e tests build debussy themselves, so a cached pass could hide
# a change to the binary.
# scripts/install-claude.sh installs the pinned CLI (npm) if it is missing.
test: vet
	DEBUSSY_TEST_CLAUDE=$${DEBUSSY_TEST_CLAUDE:-$$(bash scripts/install-claude.sh | tail -n1)} \
		$(GO) test -race -count=1 -p 2 -timeout 20m ./...

# The main job on the built-in demo: the real claude CLI against the fake API,
# in a fresh temporary git repository. No account needed.
demo:
	bash scripts/demo.sh

bench:
	bash scripts/bench-stream.sh
	bash scripts/bench-commit.sh
	bash scripts/bench-parallel.sh
