#!/usr/bin/python3
"""Runs the browser test (test_web_client.py) in SHARDS processes at once (default 2: one per core).

Each test starts its own service and its own Chromium, so tests are independent; most of a test's
time is the page's own clock (flips seconds apart, an outage of its network), which another test can
share. Tests are dealt to the shards longest first (the lengths below were measured with
`make test-browser`; a test not listed counts as a short one), so that the shards end together.
Each shard's output is printed when it ends; the run fails when any shard fails.

Usage: run_shards.py [SHARDS]
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# Seconds, measured on the 2-core machine: the tests that wait for a clock of their own.
LONG = {
    "test_pages_cut_off_play_on_in_step_reload_from_the_cache_and_rejoin_in_one_step": 40,
    "test_the_last_planned_banner_stays_and_the_badge_says_so": 30,
    "test_plays_on_from_its_plan_in_step_and_rejoins": 33,
    "test_a_page_cut_off_makes_a_change_scheduled_before_at_its_time": 31,
    "test_views_of_an_outage_and_of_a_flush_whose_answer_was_lost_count_once": 26,
    "test_receipts_of_an_outage_and_of_a_lost_answer_are_measured_once": 20,
    "test_keyboard_browses_that_view_without_animation_under_reduced_motion": 18,
    "test_a_page_that_stops_flipping_turns_out_of_step_frozen": 17,
    "test_a_library_image_shows_from_the_kept_original_on_a_page_reloaded_offline": 16,
    "test_the_list_is_read_a_page_of_100_at_a_time": 15,
    "test_the_demo_page_served_by_the_service_uses_it": 12,
}
SHORT = 4


def tests(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from tests(test)
        else:
            yield test


def main():
    shards = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    import test_web_client

    names = [test.id().split(".", 1)[1] for test in tests(unittest.defaultTestLoader.loadTestsFromModule(test_web_client))]
    dealt = [[] for _ in range(shards)]
    load = [0] * shards
    for name in sorted(names, key=lambda name: -LONG.get(name.rsplit(".", 1)[1], SHORT)):
        shard = load.index(min(load))
        dealt[shard].append(name)
        load[shard] += LONG.get(name.rsplit(".", 1)[1], SHORT)
    started = time.time()
    running = []
    for shard, names in enumerate(dealt):
        output = tempfile.TemporaryFile(mode="w+")
        process = subprocess.Popen([sys.executable, str(HERE / "test_web_client.py"), *names],
                                   stdout=output, stderr=subprocess.STDOUT, env=os.environ)
        running.append((shard, process, output, len(names)))
    failed = 0
    for shard, process, output, count in running:
        status = process.wait()
        output.seek(0)
        print(f"=== shard {shard + 1} of {shards}: {count} tests, exit {status}", flush=True)
        print(output.read(), flush=True)
        failed += status != 0
    print(f"{shards} shards, {sum(len(d) for d in dealt)} tests, {time.time() - started:.0f} s; "
          f"{failed} shard(s) failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
