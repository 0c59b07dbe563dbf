# hookhost — two commands do everything:
#   make run    build the host and plugins, run the offline demo on the gateway route
#   make test   vet, format check, generated files up to date, and every
#               test with the race detector

GO        ?= go
BIN       := bin
PLUGINS   := $(BIN)/plugins
VERSION   ?= $(shell scripts/version.sh 2>/dev/null || echo v0.0.0-unknown)
COMMIT    ?= $(shell c=$$(git rev-parse --short=7 HEAD 2>/dev/null) && { [ -z "$$(git status --porcelain --untracked-files=no)" ] && echo $$c || echo $$c-dirty; })
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
COUNT     ?= 6
BENCHTIME ?= 1s
FUZZTIME  ?= 30s
# Requests in the gateway's load run (at least 10,000, all must succeed).
LOADREQS  ?= 20000

# Pinned code generators for `make proto`.
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
PROTO_DIR          := plugins/proto/v1
PROTO_V2_DIR       := plugins/proto/v2
PY_PROTO           := plugins/python/src/hookhost_plugin/_proto
FROMDOC_PY         := internal/conformance/fromdoc/python

# Every directory with a main under examples/ and plugins/ becomes bin/plugins/<dir name>.
PLUGIN_MAINS := $(shell grep -l '^package main' $$(find examples plugins -name '*.go' -not -name '*_test.go' -not -path '*/internal/*' 2>/dev/null) 2>/dev/null | xargs -r -n1 dirname | sort -u)

.PHONY: all build plugins run test clients mcptest typescript agents bench fuzz lint generate proto proto-go proto-python proto-typescript check-generated release clean api

all: build plugins

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/hookhost ./cmd/hookhost

plugins:
	@mkdir -p $(PLUGINS)
	@for d in $(PLUGIN_MAINS); do \
		echo "build $$d -> $(PLUGINS)/$$(basename $$d)"; \
		$(GO) build -o $(PLUGINS)/$$(basename $$d) ./$$d || exit 1; \
	done

run: build plugins
	@./scripts/demo.sh

# api/ holds the exported API of every public package; internal/apisnap's
# test fails when it differs from the code.
api:
	$(GO) run ./internal/apisnap -w

# go test runs through internal/testreport, which prints a line per package
# as it finishes, the output of whatever failed, and at the end a summary:
# the tests skipped, grouped by reason, each group with the command that
# installs what it needs (under CI they fail instead). Its exit status is
# go test's, so a failed test fails make test.
test: lint clients mcptest typescript check-generated
	@mkdir -p $(BIN)
	@$(GO) build -o $(BIN)/testreport ./internal/testreport
	@echo "go test -race -count=1 ./... (a line per package as it finishes; skipped tests are summed up at the end)"
	@GO='$(GO)' $(BIN)/testreport -race -count=1 ./...

# The gateway's client tests run the npm clients (the official SDKs, the
# AI SDK, LangChain, the Agents SDK) pinned in
# gateway/clienttest/package-lock.json; npm ci runs only when node_modules
# is missing or was installed from another lockfile. Without npm those
# tests skip and say how to install them (under CI they fail instead).
CLIENTS := gateway/clienttest
clients:
	@stamp=$(CLIENTS)/node_modules/.hookhost-lock.sha256; \
	want="$$(sha256sum $(CLIENTS)/package-lock.json | cut -d' ' -f1)"; \
	if [ "$$(cat $$stamp 2>/dev/null)" != "$$want" ]; then \
		if command -v npm >/dev/null; then \
			echo "npm ci in $(CLIENTS): the SDK clients the gateway's tests run"; \
			(cd $(CLIENTS) && npm ci --no-audit --no-fund) && echo "$$want" >$$stamp; \
		else echo "npm not found: the gateway's client tests will be skipped (install Node 20+ and npm)"; fi; \
	fi

# internal/mcpgate's and cmd/hookhost's tests run real MCP software: the
# official TypeScript SDK's client and the reference servers, pinned in
# internal/mcpgate/mcptest/package-lock.json; npm ci runs only when
# node_modules is missing or was installed from another lockfile. Without
# npm those tests skip and say how to install them (under CI they fail).
MCPTEST := internal/mcpgate/mcptest
mcptest:
	@stamp=$(MCPTEST)/node_modules/.hookhost-lock.sha256; \
	want="$$(sha256sum $(MCPTEST)/package-lock.json | cut -d' ' -f1)"; \
	if [ "$$(cat $$stamp 2>/dev/null)" != "$$want" ]; then \
		if command -v npm >/dev/null; then \
			echo "npm ci in $(MCPTEST): the MCP client and servers the MCP gateway's tests run"; \
			(cd $(MCPTEST) && npm ci --no-audit --no-fund) && echo "$$want" >$$stamp; \
		else echo "npm not found: the MCP gateway's tests with real MCP software will be skipped (install Node 20+ and npm)"; fi; \
	fi

# The agent CLIs Claude Code, Codex and opencode, pinned in
# gateway/agenttest/package-lock.json (their npm packages carry native
# binaries, about 1.2 GB), each run headless against hookhost serve in three
# scenarios (a plugin tool, one of the CLI's own tools, a guard's block) on
# an upstream of its protocol and one of another. Not part of make test,
# which only replays the requests they were recorded sending; .ci/run runs
# both. npm ci runs only when node_modules is missing or was installed from
# another lockfile. AGENTS_RECORD=1 rewrites those recorded requests
# (gateway/agenttest/testdata). Claude Code and Codex are also run with
# hookhost mcp serve as their MCP server in front of the reference
# filesystem server, which make mcptest installs.
AGENTS := gateway/agenttest
agents: mcptest
	@command -v npm >/dev/null || { echo "npm not found: make agents needs Node 20+ and npm"; exit 1; }
	@stamp=$(AGENTS)/node_modules/.hookhost-lock.sha256; \
	want="$$(sha256sum $(AGENTS)/package-lock.json | cut -d' ' -f1)"; \
	if [ "$$(cat $$stamp 2>/dev/null)" != "$$want" ]; then \
		echo "npm ci in $(AGENTS): the agent CLIs (about 1.2 GB the first time)"; \
		(cd $(AGENTS) && npm ci --no-audit --no-fund) && echo "$$want" >$$stamp || exit 1; \
	fi
	HOOKHOST_AGENTS=1 HOOKHOST_AGENTS_RECORD=$(AGENTS_RECORD) $(GO) test -v -count=1 -timeout 30m ./$(AGENTS)

# The TypeScript plugin SDK and the plugins written with it, each an npm
# package with its lockfile; the SDK first, which the others link to. npm ci
# runs only when node_modules is missing or was installed from another
# lockfile; tsc runs every time. Without npm the tests that run them skip
# and say how to build them (under CI they fail instead).
TS_PACKAGES := plugins/typescript examples/typescript-cache internal/conformance/fromdoc/typescript
typescript:
	@if ! command -v npm >/dev/null; then \
		echo "npm not found: the TypeScript SDK's tests will be skipped (install Node 20+ and npm)"; exit 0; fi; \
	for d in $(TS_PACKAGES); do \
		stamp=$$d/node_modules/.hookhost-lock.sha256; \
		want="$$(sha256sum $$d/package-lock.json | cut -d' ' -f1)"; \
		if [ "$$(cat $$stamp 2>/dev/null)" != "$$want" ]; then \
			echo "npm ci in $$d: its TypeScript dependencies"; \
			(cd $$d && npm ci --no-audit --no-fund) && echo "$$want" >$$stamp || exit 1; \
		fi; \
		echo "tsc in $$d"; \
		(cd $$d && npm run --silent build) || exit 1; \
	done

lint:
	@echo "gofmt -l on every tracked .go file"
	@unformatted="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# The gateway's load run is kept out of the timed runs and sends LOADREQS
# requests; a failed request fails make bench, which tee would hide.
# Kora's ledger benchmarks read a generated ledger of KORA_BENCH_INFERENCES
# inferences (1,000,000 unless set; Kora is sized for 10000000), cached
# in bin/bench-cache for the UTC day.
bench: build plugins typescript
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkGatewayLoad$$' -benchmem -count $(COUNT) -benchtime $(BENCHTIME) ./... | tee $(BIN)/bench.txt
	$(GO) test -run '^$$' -bench '^BenchmarkGatewayLoad$$' -count 1 -benchtime $(LOADREQS)x ./gateway/bench/ >$(BIN)/load.txt; \
		status=$$?; cat $(BIN)/load.txt; cat $(BIN)/load.txt >>$(BIN)/bench.txt; exit $$status
	@echo
	@$(GO) run ./bench/report $(BIN)/bench.txt | tee $(BIN)/bench-report.txt

# Every fuzz target in the repository, one after another, FUZZTIME each on
# 2 workers; FUZZ=<regexp> picks targets by name. Not part of `make test`,
# which only replays the seeds and the inputs saved under testdata/fuzz.
fuzz:
	GO='$(GO)' FUZZTIME='$(FUZZTIME)' ./scripts/fuzz.sh

# Every generated file in every language, from the protos under
# plugins/proto and hooks/catalogue.go: the Go messages and services, the
# Python SDK's, the Python example's and the from-the-documents conform
# plugin's *_pb2.py, the TypeScript SDK's copies of the protos and its types
# (proto-loader-gen-types, pinned in plugins/typescript/package-lock.json),
# then make generate and make api. protoc is Debian's protobuf-compiler,
# whose version matches python3-protobuf; make proto installs it when it is
# missing.
proto:
	@command -v protoc >/dev/null || (apt-get update -qq && apt-get install -y -qq protobuf-compiler)
	@$(MAKE) --no-print-directory proto-go proto-python proto-typescript generate api

proto-go:
	GOBIN=$(CURDIR)/$(BIN)/tools $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/$(BIN)/tools $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(CURDIR)/$(BIN)/tools:$$PATH protoc --proto_path=$(PROTO_DIR) \
		--go_out=paths=source_relative:$(PROTO_DIR) \
		--go-grpc_out=paths=source_relative:$(PROTO_DIR) \
		plugin.proto
	PATH=$(CURDIR)/$(BIN)/tools:$$PATH protoc --proto_path=$(PROTO_DIR) --proto_path=$(PROTO_V2_DIR) \
		--go_out=paths=source_relative:$(PROTO_V2_DIR) \
		--go-grpc_out=paths=source_relative:$(PROTO_V2_DIR) \
		pluginv2.proto

# Only the messages are generated for Python; the services are registered
# by hand, so no grpcio-tools is needed.
PY_PROTO_PATHS := --proto_path=$(PROTO_DIR) --proto_path=$(PROTO_V2_DIR) \
	--proto_path=plugins/proto/health/v1 --proto_path=plugins/proto/goplugin
proto-python:
# The Python example: protocol 1 only.
	protoc --proto_path=$(PROTO_DIR) --python_out=examples/python-plugin plugin.proto
# The Python SDK's messages; pluginv2_pb2 imports plugin_pb2 from its own package.
	protoc $(PY_PROTO_PATHS) --python_out=$(PY_PROTO) plugin.proto pluginv2.proto health.proto grpc_controller.proto
	sed -i 's/^import plugin_pb2 as plugin__pb2/from . import plugin_pb2 as plugin__pb2/' $(PY_PROTO)/pluginv2_pb2.py
# The conform plugin written from PROTOCOL.md, which imports its modules from its own directory.
	protoc $(PY_PROTO_PATHS) --python_out=$(FROMDOC_PY) plugin.proto pluginv2.proto health.proto grpc_controller.proto

# The TypeScript SDK loads its own copies of the protos at run time and
# compiles against the types proto-loader-gen-types writes from them (its
# npm run gen); the old types go first, so a removed message leaves no file.
TS_SDK       := plugins/typescript
TS_GENERATED := $(TS_SDK)/src/generated
proto-typescript:
	for f in v1/plugin.proto v2/pluginv2.proto health/v1/health.proto goplugin/grpc_controller.proto goplugin/grpc_stdio.proto; do \
		cp plugins/proto/$$f $(TS_SDK)/proto/$$f; done
	@[ -x $(TS_SDK)/node_modules/.bin/proto-loader-gen-types ] || { \
		command -v npm >/dev/null || { echo "npm not found: the TypeScript SDK's types need proto-loader-gen-types (install Node 20+ and npm)"; exit 1; }; \
		echo "npm ci in $(TS_SDK): proto-loader-gen-types"; (cd $(TS_SDK) && npm ci --no-audit --no-fund); }
	find $(TS_GENERATED) -mindepth 1 -maxdepth 1 ! -name catalogue.ts ! -name harness.ts ! -name hooks.ts -exec rm -rf {} +
	cd $(TS_SDK) && npm run --silent gen >/dev/null

# make test runs this: every generator that needs no network runs again
# (make generate, make api, and, when protoc and the TypeScript SDK's
# node_modules are there, the Python and TypeScript protobuf code), and any
# file that changed or appeared is drift. scripts/check-generated.sh
# compares the working tree before and after, so uncommitted edits to
# generated files are not drift once regenerated.
check-generated:
	@GO='$(GO)' MAKE='$(MAKE)' ./scripts/check-generated.sh

# The hook catalogue is stated once, in hooks/catalogue.go; this writes from
# it the Python and TypeScript SDKs' catalogue modules, the three SDKs' test
# harness helpers, the hook tables of README.md, PROTOCOL.md and the SDK
# READMEs, and the conformance plugins' defaults (internal/gencatalogue,
# whose test fails when one is stale).
generate:
	$(GO) run ./internal/gencatalogue

# Static binaries of hookhost and Kora for Linux and macOS on amd64 and
# arm64, one dist/hookhost_<version>_<os>_<arch>.tar.gz each, and
# dist/SHA256SUMS; RELEASE_TARGETS picks targets (scripts/release.sh).
release:
	GO='$(GO)' VERSION='$(VERSION)' ./scripts/release.sh

clean:
	rm -rf $(BIN)
