# Banner carousel service. `make run` starts it on config/carousel.json; `make test` runs every test.
# Both install the Debian packages they need when missing (apt-get, as root or with sudo).

SWIFT        ?= swift
CONFIG       ?= config/carousel.json
APT_PACKAGES := libmicrohttpd-dev pkg-config
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL  := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends
SWIFT_FILES  := Sources Tests Package.swift

.PHONY: all deps build debug run test lint format clean

all: build

## deps: install libmicrohttpd-dev and pkg-config with apt when they are missing
deps:
	@command -v $(SWIFT) >/dev/null || { echo "error: no 'swift' on PATH; install the Swift 6 toolchain from swift.org"; exit 1; }
	@if ! pkg-config --exists libmicrohttpd 2>/dev/null; then \
		echo "installing $(APT_PACKAGES)"; \
		$(APT_INSTALL) $(APT_PACKAGES) || { $(SUDO) apt-get update && $(APT_INSTALL) $(APT_PACKAGES); }; \
	fi

## build: the release binary, .build/release/banner-server
build: deps
	$(SWIFT) build -c release

## debug: the debug binary and the test bundle
debug: deps
	$(SWIFT) build --build-tests

## run: build and start the service on $(CONFIG) (Ctrl-C stops it)
run: build
	.build/release/banner-server --config $(CONFIG)

## test: check formatting, build, run every test
test: deps lint
	$(SWIFT) build --build-tests
	$(SWIFT) test

## lint: fail on any swift-format finding (configuration in .swift-format)
lint:
	$(SWIFT) format lint --strict --recursive $(SWIFT_FILES)

## format: rewrite the sources in the project's format
format:
	$(SWIFT) format --in-place --recursive $(SWIFT_FILES)

clean:
	rm -rf .build
