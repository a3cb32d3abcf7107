"""The audit log's cost alone (docs/PERFORMANCE.md, docs/AUDIT.md): admin writes on the release
build and on the bench build whose stores append no audit entry (`make build bench-uncounted`
first), alternating; `make bench` measures the same in its "Admin writes" section."""

import argparse
import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location("run", Path(__file__).with_name("run.py"))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=4, help="clients adding banners at once")
    parser.add_argument("--writes", type=int, default=100, help="banners each client adds a round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds on each build, alternating")
    arguments = parser.parse_args()
    run.OUT.mkdir(parents=True, exist_ok=True)
    audited = run.start_service(2, name="audit-audited", key="audited", label="banner-server")
    unaudited = run.start_service(2, name="audit-unaudited", key="unaudited", label="no audit log",
                                  binary=run.UNCOUNTED)
    try:
        result = run.audit_cost(audited, unaudited, arguments.clients, arguments.writes, rounds=arguments.rounds)
    finally:
        audited.stop()
        unaudited.stop()
    print(f"admin writes with the audit log / without: {result['ratio']:.2f} "
          f"({result['audited']:,.0f} vs {result['unaudited']:,.0f} req/s, medians; rounds "
          f"{', '.join(f'{ratio:.2f}' for ratio in result['ratios'])})")


if __name__ == "__main__":
    main()
