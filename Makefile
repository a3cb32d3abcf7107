# Banner carousel service. `make run` starts it on config/carousel.json; `make test` runs every test.
# Both install the Debian packages they need when missing (apt-get, as root or with sudo).

SWIFT        ?= swift
CC           ?= cc
CONFIG       ?= config/carousel.json
APT_PACKAGES := libmicrohttpd-dev libsqlite3-dev libpq-dev libvips-dev libcurl4-openssl-dev pkg-config tzdata
# The tests start their own PostgreSQL servers (initdb, postgres, pg_ctl from Debian's package)
# and check /metrics with Prometheus' promtool; libvips' command-line tools read back the images
# the service makes (an independent decoder).
TEST_PACKAGES := postgresql prometheus libvips-tools
# The browser test: Debian's Chromium, its WebDriver, and Selenium for Debian's own Python.
BROWSER_PACKAGES := chromium chromium-driver python3-selenium
SYSTEM_PYTHON    := /usr/bin/python3
# What `make bench` runs beside the service: load generators, nginx, a C compiler for the reference.
BENCH_TOOLS  := wrk:wrk nginx:nginx-light h2load:nghttp2-client valgrind:valgrind $(CC):gcc python3:python3
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL  := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends
SWIFT_FILES  := Sources Tests Package.swift Fuzz/Package.swift Fuzz/Sources

.PHONY: all deps test-deps cluster cluster-check cluster-deps bench-deps browser-deps openapi-deps build debug run test test-unit test-browser test-openapi \
	test-allocations test-sanitize fuzz container-check lint format bench bench-smoke bench-uncounted clean bench-offline bench-media

all: build

## deps: install libmicrohttpd-dev, libsqlite3-dev, libpq-dev, libvips-dev (uploaded images),
## libcurl4-openssl-dev (webhook deliveries), pkg-config and tzdata (time zones for schedules) with
## apt when they are missing
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: no 'swift' on PATH; install the Swift 6 toolchain from swift.org"; exit 1; }
	@if ! pkg-config --exists libmicrohttpd sqlite3 libpq vips libcurl 2>/dev/null || [ ! -e /usr/share/zoneinfo/Europe/Berlin ]; then \
		echo "installing $(APT_PACKAGES)"; \
		$(APT_INSTALL) $(APT_PACKAGES) || { $(SUDO) apt-get update && $(APT_INSTALL) $(APT_PACKAGES); }; \
	fi

## test-deps: install PostgreSQL (the tests start their own servers), Prometheus (promtool) and
## libvips-tools when missing
test-deps:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || [ ! -x /usr/bin/promtool ] || [ ! -x /usr/bin/vipsheader ]; then \
		echo "installing $(TEST_PACKAGES)"; \
		$(APT_INSTALL) $(TEST_PACKAGES) || { $(SUDO) apt-get update && $(APT_INSTALL) $(TEST_PACKAGES); }; \
	fi

## bench-deps: install wrk, nginx-light, nghttp2-client (h2load), valgrind and gcc when missing
bench-deps: deps test-deps
	@missing=""; for pair in $(BENCH_TOOLS); do \
		command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing$$missing"; \
		$(APT_INSTALL) $$missing || { $(SUDO) apt-get update && $(APT_INSTALL) $$missing; }; \
	fi

## browser-deps: install chromium, chromium-driver and python3-selenium when missing
browser-deps: deps
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ] || ! $(SYSTEM_PYTHON) -c 'import selenium' 2>/dev/null; then \
		echo "installing $(BROWSER_PACKAGES)"; \
		$(APT_INSTALL) $(BROWSER_PACKAGES) || { $(SUDO) apt-get update && $(APT_INSTALL) $(BROWSER_PACKAGES); }; \
	fi

# Test tools from PyPI live in a virtual environment of their own under .build/, at the exact
# versions of Tests/requirements.txt (installed again whenever that file changes).
VENV         := .build/venv
SCHEMATHESIS := $(VENV)/bin/schemathesis
PY_REQUIREMENTS := Tests/requirements.txt

## openapi-deps: the pinned test tools from PyPI (Tests/requirements.txt) into $(VENV) when missing
## or changed (and Debian's python3-venv for it)
openapi-deps: $(VENV)/installed

$(VENV)/installed: $(PY_REQUIREMENTS)
	@python3 -m venv $(VENV) 2>/dev/null || { echo "installing python3-venv"; \
		$(APT_INSTALL) python3-venv || { $(SUDO) apt-get update && $(APT_INSTALL) python3-venv; }; \
		rm -rf $(VENV); python3 -m venv $(VENV); }
	@echo "installing $(PY_REQUIREMENTS) into $(VENV)"
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r $(PY_REQUIREMENTS)
	@touch $@

## build: the release binary, .build/release/banner-server, with the Swift runtime linked in
## statically as the Dockerfile builds it (so make container-check runs this very binary)
build: deps
	$(SWIFT) build -c release --static-swift-stdlib

## debug: the debug binary and the test bundle
debug: deps
	$(SWIFT) build --build-tests

## run: build and start the service on $(CONFIG) (Ctrl-C stops it)
run: build
	.build/release/banner-server --config $(CONFIG)

# The Swift suite's build under AddressSanitizer (with LeakSanitizer): what `make test` runs it on,
# so that no plain debug build of the tests is made beside it (CI builds each configuration once).
ASAN_BUILD := --sanitize=address --build-path .build/asan
ASAN_ENV    = ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/sanitizers/lsan.supp:print_suppressions=0

## test: check formatting, build, run every test: the Swift suite under AddressSanitizer and
## LeakSanitizer, the OpenAPI document with schemathesis, the browser test, heap allocations per
## read, the cluster check (the release binary serves all but the Swift suite). docs/TESTING.md says
## what each holds and how long it takes.
test: deps test-deps lint build
	$(SWIFT) build --build-tests $(ASAN_BUILD)
	$(ASAN_ENV) $(SWIFT) test $(ASAN_BUILD)
	$(MAKE) test-openapi
	$(MAKE) test-browser
	$(MAKE) test-allocations
	$(MAKE) cluster-check

## test-unit: the Swift tests that need no socket, no real clock and no child process (the rules,
## JSON, time zones, the memory and SQLite stores, the runtime, the API through its router), in a
## plain debug build: the tier to run while changing code (CAROUSEL_TEST_TIER=unit, docs/TESTING.md)
test-unit: deps
	$(SWIFT) build --build-tests
	CAROUSEL_TEST_TIER=unit $(SWIFT) test --skip-build --filter '$(UNIT_TARGETS)'

UNIT_TARGETS := ^(ThreadingTests|PlatformTests|TimeZonesTests|CarouselTests|JSONTests|DigestTests|WebhooksTests|MediaTests|StoreTests|CarouselRuntimeTests|BannerServiceTests)\.

## test-allocations: heap blocks per keep-alive GET /banner (valgrind's dhat, release build) stay
## far below one
test-allocations: bench-deps build
	python3 Tests/allocations/test_read_allocations.py

## test-openapi: schemathesis, every check, fixed seed, against the release build and /openapi.json
test-openapi: openapi-deps build
	python3 Tests/openapi/test_openapi.py $(SCHEMATHESIS) .build/release/banner-server

## test-browser: the web client in headless Chromium against the release build, in two processes
## at once (Tests/browser/run_shards.py; screenshots in .build/browser-artifacts/)
test-browser: browser-deps build
	BANNER_SERVER=.build/release/banner-server $(SYSTEM_PYTHON) Tests/browser/run_shards.py

## test-sanitize: the Swift test suite (live servers and child processes included) under
## ThreadSanitizer (`make test` runs it under AddressSanitizer and LeakSanitizer; suppressions in
## Tests/sanitizers)
test-sanitize: deps test-deps
	$(SWIFT) build --build-tests --sanitize=thread --build-path .build/tsan
	$(SWIFT) test --sanitize=thread --build-path .build/tsan

# A crash under a sanitizer gets the sanitizer's own report; Swift's backtracer, which would also
# run, was seen to hang there (it cannot suspend the sanitizer's threads), holding the run open.
test test-sanitize fuzz: export SWIFT_BACKTRACE := enable=no

FUZZ_SECONDS ?= 60
FUZZ_TARGETS := FuzzCommandBody FuzzConfiguration FuzzJSON FuzzMediaRequests FuzzMediaUpload FuzzQueryString FuzzRequestHead FuzzRequestLine FuzzWebhookURL
# SwiftPM's --sanitize=fuzzer instruments only the executable: coverage is asked for everywhere.
FUZZ_FLAGS   := --sanitize=fuzzer --sanitize=address -Xswiftc -parse-as-library \
	-Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table

## fuzz: each libFuzzer target (Fuzz/) for FUZZ_SECONDS (60), two at a time (one per core),
## seeded from Fuzz/corpus; new inputs go to .build/fuzz/corpus, crashes to .build/fuzz/artifacts
## (and fail the run)
fuzz: deps
	@mkdir -p .build/fuzz/artifacts
	cd Fuzz && $(SWIFT) build $(FUZZ_FLAGS)
	@$(MAKE) --no-print-directory --output-sync=target -j$(FUZZ_JOBS) $(addprefix fuzz-target-,$(FUZZ_TARGETS))

# Each target is single-threaded: running FUZZ_JOBS at once gives each the same CPU time as one
# after another, in a fraction of the wall time (CI's budget).
FUZZ_JOBS ?= 2
fuzz-target-%:
	@mkdir -p .build/fuzz/corpus/$*
	@echo "fuzzing $* for $(FUZZ_SECONDS) s"
	@LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/sanitizers/lsan.supp:print_suppressions=0 \
	Fuzz/.build/debug/$* -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		-artifact_prefix=.build/fuzz/artifacts/$*- .build/fuzz/corpus/$* Fuzz/corpus/$* \
		> .build/fuzz/$*.log 2>&1; status=$$?; \
	grep -E "DONE|stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" .build/fuzz/$*.log; \
	[ $$status -eq 0 ] || { echo "$* failed: see .build/fuzz/$*.log"; exit 1; }; \
	echo "corpus: $$(ls .build/fuzz/corpus/$* | wc -l) new inputs beside $$(ls Fuzz/corpus/$* | wc -l) seeds"

## cluster: a throwaway PostgreSQL, three replicas and nginx in front of them on CLUSTER_PORT
## (default 8080); Ctrl-C stops all of it (deploy/cluster.sh)
cluster: build cluster-deps
	deploy/cluster.sh

## cluster-check: make cluster started, used through nginx, stopped, and nothing left running
cluster-check: build cluster-deps
	Tests/cluster/cluster-check.sh

cluster-deps: test-deps
	@command -v nginx >/dev/null || { echo "installing nginx-light"; \
		$(APT_INSTALL) nginx-light || { $(SUDO) apt-get update && $(APT_INSTALL) nginx-light; }; }

## container-check: the Dockerfile's runtime stage without a Docker engine: a debootstrapped
## Debian root filesystem with its runtime packages, the static binary run in it (needs root)
container-check: build
	@command -v debootstrap >/dev/null || { echo "installing debootstrap"; \
		$(APT_INSTALL) debootstrap || { $(SUDO) apt-get update && $(APT_INSTALL) debootstrap; }; }
	$(SUDO) Tests/container/container-check.sh

## lint: fail on any swift-format finding (configuration in .swift-format)
lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_FILES)

## format: rewrite the sources in the project's format
format:
	$(SWIFT) format --in-place --recursive $(SWIFT_FILES)

bench/out/reference: bench/reference/reference.c
	@mkdir -p bench/out
	$(CC) -O2 -Wall -Wextra -o $@ $< $$(pkg-config --cflags --libs libmicrohttpd)

bench/out/sse_fanout: bench/tools/sse_fanout.c bench/tools/net.h
	@mkdir -p bench/out
	$(CC) -O2 -Wall -Wextra -o $@ $<

bench/out/sse_arrivals: bench/tools/sse_arrivals.c
	@mkdir -p bench/out
	$(CC) -O2 -Wall -Wextra -o $@ $<

bench/out/sse_reference: bench/reference/sse_reference.c
	@mkdir -p bench/out
	$(CC) -O2 -Wall -Wextra -o $@ $<

bench/out/screens_load: bench/tools/screens_load.c bench/tools/net.h
	@mkdir -p bench/out
	$(CC) -O2 -Wall -Wextra -o $@ $<

BENCH_BINARIES := bench/out/reference bench/out/sse_fanout bench/out/sse_arrivals bench/out/sse_reference bench/out/screens_load

## bench: GET /banner against nginx and the C reference, POST, memory, latency, event-stream
## fan-out and timing -> bench/results.md; then the fleet of screens (bench-screens) and offline
## play (bench-offline)
bench: bench-deps browser-deps build bench-uncounted $(BENCH_BINARIES)
	$(SYSTEM_PYTHON) bench/run.py
	$(MAKE) bench-screens
	$(MAKE) bench-offline
	$(MAKE) bench-media

## bench-screens: 10,000 simulated screens holding streams and sending receipts (bench/screens.py)
bench-screens: bench-deps build bench/out/screens_load
	$(SYSTEM_PYTHON) bench/screens.py

## bench-offline: 4 pages through proxies of their own play on while the service is killed for
## 2 minutes: lateness against the timeline, spread, views lost and duplicated (bench/offline.py)
bench-offline: bench-deps browser-deps build
	$(SYSTEM_PYTHON) bench/offline.py

## bench-media: uploads (a 4000 × 3000 JPEG's variants), GET /media/ID/960.webp beside nginx,
## RSS during four 10 MiB uploads, GET /banner while uploads run (bench/media.py)
bench-media: bench-deps build
	$(SYSTEM_PYTHON) bench/media.py

## bench-uncounted: the release binary with request counting and the audit log compiled out, for
## bench's A/B (reads are not audited, a write's counting is a few atomic adds: each A/B measures one)
bench-uncounted: deps
	$(SWIFT) build -c release --product banner-server --build-path .build/uncounted -Xswiftc -DNO_REQUEST_METRICS \
		-Xswiftc -DNO_AUDIT_LOG

## bench-smoke: the same harness for a few seconds, to prove it runs (the numbers mean nothing, so
## the release binary stands in for the uncounted one: one release build less in CI)
bench-smoke: bench-deps browser-deps build $(BENCH_BINARIES)
	$(SYSTEM_PYTHON) bench/run.py --smoke

clean:
	rm -rf .build bench/out
