#!/bin/sh
# Makes the sample banners (config/banners/*.jpg) from banners.html: each scene photographed by
# headless Chromium at 1600 × 600, then written as a JPEG by libvips (Debian's chromium and
# libvips-tools). The images are committed; run this again only to change them.
set -eu
cd "$(dirname "$0")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for banner in welcome spring-sale free-delivery new-arrivals app-download; do
    chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
        --window-size=1600,600 --user-data-dir="$work/profile" \
        --screenshot="$work/$banner.png" "file://$PWD/banners.html#$banner" 2>/dev/null
    vips copy "$work/$banner.png" "$banner.jpg[Q=82,strip,optimize_coding]"
done
ls -l ./*.jpg
