# pixgate: the commands of the README. Everything needs Go only (and Docker for the suites under
# test/, which fall back to an in-process FerretDB where no Docker engine answers).
GO      ?= go
ADDR    ?= :8080
export TESTCONTAINERS_RYUK_DISABLED ?= true
# The run's name, on every container and network the suites start (label
# org.pixgate.test.run): test-leftovers looks for this run's and touches nothing else. Set once
# (:=), so that the suites and the check after them see the same name.
ifndef PIXGATE_TEST_RUN
PIXGATE_TEST_RUN := make-$(shell date -u +%Y%m%dT%H%M%S)-$(shell echo $$PPID)
endif
export PIXGATE_TEST_RUN

.PHONY: run build docs-settings test test-fast test-unit test-integration test-integration-suites test-leftovers browser zbar qr-readback lint ferretdb fuzz bench load load-psp soak image

## run: serve with the sandbox and the memory store, printing a demo account once. The caller's
## PIXGATE_* settings win: PIXGATE_ADDR (else $(ADDR)), PIXGATE_STORE, PIXGATE_SANDBOX and the
## rest only get these defaults when unset, so `PIXGATE_ADDR=:9090 make run` serves on :9090.
run:
	PIXGATE_ADDR=$${PIXGATE_ADDR:-$(ADDR)} PIXGATE_SANDBOX=$${PIXGATE_SANDBOX:-true} \
		PIXGATE_SANDBOX_DEMO_ACCOUNT=$${PIXGATE_SANDBOX_DEMO_ACCOUNT:-true} PIXGATE_STORE=$${PIXGATE_STORE:-memory} \
		PIXGATE_WEBHOOK_ALLOW_PRIVATE=$${PIXGATE_WEBHOOK_ALLOW_PRIVATE:-false} $(GO) run ./cmd/pixgate serve

## build: a static binary in bin/
build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/pixgate ./cmd/pixgate

## docs-settings: write the settings tables of docs/OPERATIONS.md from the settings the code
## declares (Config's groups in cmd/pixgate), as `pixgate help settings -markdown` prints them
docs-settings:
	$(GO) test ./cmd/pixgate -count=1 -run '^TestSettingsTableIsGenerated$$' -update-docs

## test: every test that must pass: lint, the product module with -race, and the test/ module
## (the browser test needs Chromium, the tests that read QR images back zbarimg: installed here
## with apt-get when missing, if we may); then test-leftovers. Every step runs whatever an
## earlier one answered, and the end lists each one that failed; any failure fails the target.
TEST_STEPS = lint zbar test-unit browser test-integration-suites test-leftovers
test:
	@failed=""; \
	for step in $(TEST_STEPS); do \
		echo "== make $$step"; \
		$(MAKE) --no-print-directory $$step || failed="$$failed $$step"; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "make test: FAILED:$$failed (their output is above, under \"== make <step>\")"; exit 1; \
	fi; \
	echo "make test: every step passed ($(TEST_STEPS))"

## test-unit: the product module with -race, the soak included (it runs only where
## PIXGATE_SOAK_DURATION is set, so that a plain `go test ./cmd/...` stays quick)
SOAK_UNIT ?= 10s
test-unit:
	PIXGATE_SOAK_DURATION=$(SOAK_UNIT) $(GO) test -race -count=1 ./...

## test-fast: the inner loop: the product module's tests without -race and with -short (no
## soak, no container, no browser: a few minutes, where `make test` takes a quarter of an hour)
test-fast:
	$(GO) test -short ./...

## test-integration: the test/ module's suites, then, pass or fail, test-leftovers
test-integration:
	@status=0; \
	$(MAKE) --no-print-directory test-integration-suites || status=$$?; \
	$(MAKE) --no-print-directory test-leftovers || status=1; \
	exit $$status

## test-integration-suites: the test/ module's suites (FerretDB on SQLite), then the bounds of the
## background work (test/e2e) on FerretDB over PostgreSQL, where the machine has PostgreSQL's
## programs (CI installs them; docs/STORAGE.md, "Background work")
BOUNDS_TEST = ^TestBackgroundWorkKeepsItsBoundsUnderManyMerchants$$
test-integration-suites:
	@status=0; \
	(cd test && $(GO) test -race -count=1 -timeout 30m ./...) || status=$$?; \
	if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || test -x "$$(pg_config --bindir 2>/dev/null)/initdb"; then \
		(cd test && PIXGATE_TEST_FERRETDB_BACKEND=postgresql $(GO) test -race -count=1 -timeout 10m -run '$(BOUNDS_TEST)' ./e2e) || status=1; \
	else \
		echo "PostgreSQL's programs (initdb, postgres) are missing: the bounds of the background work are not checked on FerretDB over PostgreSQL"; \
	fi; \
	exit $$status

## test-leftovers: fail, listing them, if containers or networks of this run's suites are still
## there (each suite removes its own, pass or fail); they are removed, so the next run starts
## clean. Only what carries this run's label is looked at. Without a Docker engine: nothing to do.
test-leftovers:
	@if ! docker info >/dev/null 2>&1; then echo "test-leftovers: no Docker engine answers: nothing to check"; exit 0; fi; \
	run=org.pixgate.test.run=$(PIXGATE_TEST_RUN); \
	ctrs=$$(docker ps -a --filter "label=$$run" --format '{{.ID}}  {{.Image}}  {{.Label "org.pixgate.test"}}  {{.Status}}  {{.Names}}'); \
	nets=$$(docker network ls --filter "label=$$run" --format '{{.ID}}  {{.Name}}  {{.Label "org.pixgate.test"}}'); \
	if [ -z "$$ctrs$$nets" ]; then echo "test-leftovers: the suites of run $(PIXGATE_TEST_RUN) left no container or network"; exit 0; fi; \
	echo "test-leftovers: the suites of run $(PIXGATE_TEST_RUN) left these behind (now removed):"; \
	[ -z "$$ctrs" ] || { echo "$$ctrs"; docker rm -f -v $$(echo "$$ctrs" | cut -d' ' -f1) >/dev/null; }; \
	[ -z "$$nets" ] || { echo "$$nets"; docker network rm $$(echo "$$nets" | cut -d' ' -f1) >/dev/null; }; \
	exit 1

## browser: install Debian's chromium for the payment page's browser test (test/browser) when it
## is missing; without root or apt-get it says so, and the test skips (or fails in CI, which sets
## PIXGATE_TEST_REQUIRE_BROWSER=1)
CHROMIUM ?= /usr/bin/chromium
browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
		else \
			echo "Chromium is missing at $(CHROMIUM) and cannot be installed here (needs root and apt-get): the browser test will skip"; \
		fi; \
	fi

## zbar: install Debian's zbar-tools (zbarimg), with which the tests read QR images back
## (adapters/qr/qrtest), when it is missing; without root or apt-get it says so, and those tests
## skip (or fail in CI, which sets PIXGATE_TEST_REQUIRE_ZBAR=1)
zbar:
	@if ! command -v zbarimg >/dev/null 2>&1; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && apt-get install -y -qq zbar-tools >/dev/null; \
		else \
			echo "zbarimg is missing and cannot be installed here (needs root and apt-get): the tests that read QR images back will skip"; \
		fi; \
	fi

## qr-readback: draw QR_CODES (default 10000) random BR Codes, static and dynamic, with the product's
## emitter and renderer, and read each back with zbar and gozxing (docs/PERFORMANCE.md, "QR codes
## read back"; `make test` reads 300)
QR_CODES ?= 10000
qr-readback: zbar
	cd test && PIXGATE_QR_READBACK_CODES=$(QR_CODES) $(GO) test -run '^TestProductCodesReadBackWithBothReaders$$' -count=1 -timeout 0 -v ./qrbench

## ferretdb: a MongoDB-protocol server on FERRETDB_ADDR for `PIXGATE_STORE=mongo`, on a machine
## without container images: the FerretDB v1.24 the test suites embed (test/internal/ferretmain),
## in the foreground until Ctrl-C. Its data stays in FERRETDB_DIR across runs: in a PostgreSQL
## server of its own when Debian's PostgreSQL is installed (apt-get install postgresql), else in
## SQLite files (FERRETDB_BACKEND=sqlite asks for SQLite anyway). docs/STORAGE.md, "The stores".
FERRETDB_ADDR    ?= 127.0.0.1:27017
FERRETDB_DIR     ?= .ferretdb
FERRETDB_BACKEND ?= postgresql
ferretdb:
	cd test && $(GO) run ./internal/ferretmain -listen $(FERRETDB_ADDR) -dir $(abspath $(FERRETDB_DIR))/sqlite \
		$(if $(filter postgresql,$(FERRETDB_BACKEND)),-postgresql-dir $(abspath $(FERRETDB_DIR))/postgresql -sqlite-fallback)

## lint: gofmt check and go vet, in both modules
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd test && $(GO) vet ./...

## fuzz: each fuzz target for FUZZTIME (default 20s)
FUZZTIME ?= 20s
fuzz:
	@$(GO) list -f '{{.ImportPath}}' ./... | while read -r pkg; do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## bench: micro-benchmarks of the hot paths (docs/PERFORMANCE.md lists them)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	cd test && $(GO) test -run '^$$' -bench . -benchmem ./load ./qrbench

## load: load run against a real `pixgate serve` on loopback (about 2 min); rewrites docs/PERFORMANCE.md's measured section
load:
	cd test && $(GO) run ./load

## load-psp: POST /transaction with charges made at the fake PSP against the sandbox's, in one run (about 35 s; docs/PERFORMANCE.md, "Charges made at a PSP")
load-psp:
	PIXGATE_PSP_LOAD=1 $(GO) test -run '^TestPSPCreationThroughput$$' -count=1 -v ./cmd/pixgate

## soak: mixed load for SOAK (default 2m); live heap and goroutines must level off
SOAK ?= 2m
soak:
	PIXGATE_SOAK_DURATION=$(SOAK) $(GO) test -run '^TestSoakMixedLoadLevelsOff$$' -count=1 -timeout 0 -v ./cmd/pixgate

IMAGE     ?= pixgate:local
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt

## image: the pixgate image $(IMAGE) FROM scratch, no registry needed (Dockerfile.scratch): a static
## binary, the CA bundle of this machine and the unprivileged user 65532
image:
	rm -rf bin/image && mkdir -p bin/image
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags='-s -w' -o bin/image/pixgate ./cmd/pixgate
	cp $(CA_BUNDLE) bin/image/ca-certificates.crt
	printf 'pixgate:x:65532:65532:pixgate:/nonexistent:/sbin/nologin\n' > bin/image/passwd
	printf 'pixgate:x:65532:\n' > bin/image/group
	docker build -f Dockerfile.scratch -t $(IMAGE) bin/image
