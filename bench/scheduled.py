"""A scheduled change's lateness at its time (docs/PERFORMANCE.md, docs/SCHEDULED.md), on the
release build (`make build` first); `make bench` measures the same in its "Scheduled changes"
table."""

import argparse
import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location("run", Path(__file__).with_name("run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--changes", type=int, default=200, help="changes scheduled 100 ms apart")
    parser.add_argument("--threads", type=int, default=2, help="the service's threads")
    arguments = parser.parse_args()
    run.OUT.mkdir(parents=True, exist_ok=True)
    result = run.scheduled_change_timing(arguments.threads, arguments.changes)
    for key, name in (("effect", "in effect"), ("seen", "seen by a subscriber")):
        figures = result[key]
        print(f"{name}: p50 {figures['p50']:.2f} ms, p99 {figures['p99']:.2f} ms, max {figures['max']:.2f} ms, "
              f"{figures['early']} early ({result['changes']} changes)")


if __name__ == "__main__":
    main()
