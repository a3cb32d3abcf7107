# syntax=docker/dockerfile:1
# banner-server in a container. Two stages: the Swift toolchain builds a release binary with the
# Swift runtime linked in statically; a slim Debian runtime adds only the shared libraries it
# still needs. `make container-check` builds the runtime stage's root filesystem from Debian
# packages (with the RUNTIME_PACKAGES below) and runs the service in it, without a Docker engine.

FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev libpq-dev libvips-dev libcurl4-openssl-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Package.swift names the test targets too, so their folders must exist for it to resolve.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product banner-server \
    && install -D "$(swift build -c release --static-swift-stdlib --show-bin-path)/banner-server" /out/banner-server

FROM debian:bookworm-slim
# What the binary links to besides glibc: libmicrohttpd (and, through it, GnuTLS), SQLite, libpq
# (PostgreSQL's client library), libvips (uploaded images, docs/MEDIA.md; with its HEIF module
# for AVIF), libcurl with the CA certificates it verifies https webhook receivers with
# (docs/WEBHOOKS.md), and the C++ runtime the Swift runtime is written in; and the time zone
# database schedules read (docs/SCHEDULES.md). Nothing -dev.
ARG RUNTIME_PACKAGES="libmicrohttpd12 libsqlite3-0 libpq5 libvips42 libcurl4 ca-certificates libstdc++6 tzdata"
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin carousel \
    && install -d -o carousel -g carousel -m 0750 /var/lib/banner-carousel
COPY --from=build /out/banner-server /usr/local/bin/banner-server
COPY config/carousel.json /etc/banner/carousel.json
# The sample banners the configuration names as files beside it: an empty store keeps them in its
# media library (docs/CONFIGURATION.md).
COPY config/banners/*.jpg /etc/banner/banners/
COPY LICENSE NOTICE /usr/share/doc/banner-carousel/
# The configuration seeds an empty store; the store (a volume) is the truth afterwards
# (docs/STORE.md). Mount another file over /etc/banner/carousel.json, or override single settings
# with CAROUSEL_*.
ENV CAROUSEL_CONFIG=/etc/banner/carousel.json
ENV CAROUSEL_STORE=/var/lib/banner-carousel/carousel.db
VOLUME /var/lib/banner-carousel
USER carousel
EXPOSE 8080
# No curl in the image: the binary asks /healthz itself.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["/usr/local/bin/banner-server", "healthcheck"]
# Exec form: banner-server is PID 1 and gets SIGTERM itself, then stops gracefully.
ENTRYPOINT ["/usr/local/bin/banner-server"]
