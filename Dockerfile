# syntax=docker/dockerfile:1
# Two stages: the Swift toolchain builds a release binary with the Swift runtime linked in
# statically; a slim Debian runtime adds only libmicrohttpd. (Verifying this image without a
# Docker engine is issue 7.)

FROM swift:6.3-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libmicrohttpd-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Package.swift names the test targets too, so their folders must exist for it to resolve.
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product banner-server \
    && install -D "$(swift build -c release --show-bin-path)/banner-server" /out/banner-server

FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libmicrohttpd12 \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin carousel
COPY --from=build /out/banner-server /usr/local/bin/banner-server
COPY config/carousel.json /etc/banner-carousel/carousel.json
ENV CAROUSEL_CONFIG=/etc/banner-carousel/carousel.json
USER carousel
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/banner-server"]
