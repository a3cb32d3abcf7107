#!/usr/bin/env python3
"""A keep-alive GET /banner allocates nothing on the heap, nor does an audience's.

Counts heap blocks with valgrind's dhat (a count, exact for a given binary, unlike any timing):
the release banner-server answering READS keep-alive reads after a few to warm up, minus the
same run with only those, per read. The read path answers from responses built once per state version, so the figure is a
small fraction (dhat's own and libmicrohttpd's occasional blocks); one allocation per read would
make it 1 or more. Uses the measuring code of `make bench` (bench/run.py).
"""
import importlib.util
import sys
from pathlib import Path

READS = 2000
# Fewer than one block per ten reads: any allocation on every read (or every other) fails.
LIMIT = 0.1

spec = importlib.util.spec_from_file_location("bench", Path(__file__).resolve().parents[2] / "bench" / "run.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

bench.OUT.mkdir(parents=True, exist_ok=True)
failed = 0
# The plain read, and the read of one audience of 64 (docs/AUDIENCES.md): its name is scanned,
# checked and looked up in place.
for path, banners in (("/banner", None), ("/banner?audience=a17", bench.audience_banners(64))):
    per_read = bench.heap_blocks_per_read(READS, path=path, banners=banners)
    print(f"heap blocks per keep-alive GET {path} over {READS} reads: {per_read:.4f} (limit {LIMIT})")
    failed += per_read >= LIMIT
print(f"{2 - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
