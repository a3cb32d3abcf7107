#!/usr/bin/env bash
# Prints the Debian archive this machine's apt is configured to use (the URI of its first source
# for the main archive, not the security one), so that debootstrap fetches from wherever the
# machine is set up to: no mirror's host is written in the repository. DEBIAN_MIRROR overrides it.
# Reads both formats: deb822 (/etc/apt/sources.list.d/*.sources) and one-line (*.list).
set -euo pipefail
if [ -n "${DEBIAN_MIRROR:-}" ]; then echo "$DEBIAN_MIRROR"; exit 0; fi
shopt -s nullglob
for file in /etc/apt/sources.list.d/*.sources; do
    # Stanzas are separated by blank lines: the URIs of the first deb stanza that is not security.
    awk 'BEGIN { RS = ""; FS = "\n" }
        /(^|\n)Types:[^\n]*deb([ \t\n]|$)/ && !/(^|\n)Enabled:[ \t]*no/ {
            for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, /[ \t]+/); uri = u[2] }
            if (uri !~ /security/) { print uri; exit }
        }' "$file"
done | head -n 1 | grep . && exit 0
for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; break } }' "$file"
done | grep -v security | head -n 1 | grep . && exit 0
echo "debian-mirror.sh: no Debian archive in /etc/apt/sources.list or /etc/apt/sources.list.d; set DEBIAN_MIRROR" >&2
exit 1
