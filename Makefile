# Slipway. The two commands a newcomer needs: `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build run test test-under-load test-go lint fuzz bench generate prereqs probe clean

all: build

build: probe
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/slipway ./cmd/slipway

# The static health-check probe, embedded into slipway (see runtime/probe).
probe:
	@$(MAKE) -s -C runtime/probe

prereqs:
	@bash scripts/prereqs.sh

# Starts Slipway on this machine: a private Postgres when DATABASE_URL is
# unset, the worker, the gateway and the dashboard.
run: prereqs build
	./bin/slipway dev

# go vet and staticcheck (honnef.co/go/tools, a tool of go.mod), clean.
lint:
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

# Runs the linters, then every test against real Postgres, real Docker
# Swarm and real Chromium.
test: prereqs build lint
	@mkdir -p test-artifacts; rm -f test-artifacts/summary.txt
	@export DATABASE_URL="$${DATABASE_URL:-$$(bash scripts/test-postgres.sh)}"; \
	  export SLIPWAY_BIN="$(CURDIR)/bin/slipway"; \
	  export SLIPWAY_TEST_SUMMARY="$(CURDIR)/test-artifacts/summary.txt"; \
	  since=$$(date +%s); $(GO) test -count=1 -timeout 60m ./...; rc=$$?; \
	  SLIPWAY_LEFTOVERS_SINCE=$$since $(GO) test -count=1 -v -run 'TestNothingLeftByTheRun|TestNoMultinodeClusterLeft' ./test/leftovers/ && [ $$rc = 0 ] && \
	  SLIPWAY_CHAOS_DOCKERD=1 $(GO) test -count=1 -timeout 15m ./test/chaos/dockerd/ && \
	  bash scripts/fuzz.sh 10s && \
	  { echo "== summary"; cat test-artifacts/summary.txt 2>/dev/null; }

# make test while one CPU burner per core keeps the machine busy
# (SLIPWAY_LOAD_BURNERS=N for another count).
test-under-load:
	bash scripts/under-load.sh $(MAKE) test

test-go:
	$(GO) test -count=1 ./...

fuzz:
	bash scripts/fuzz.sh 5m

bench: prereqs build
	@export DATABASE_URL="$${DATABASE_URL:-$$(bash scripts/test-postgres.sh)}"; \
	  $(GO) test -run '^$$' -bench . -benchmem ./...

generate:
	$(GO) -C views tool templ generate
	$(GO) run ./cmd/slipway schema > docs/slipway.schema.json

clean:
	rm -rf bin test-artifacts
