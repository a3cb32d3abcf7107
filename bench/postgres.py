"""The PostgreSQL part of `make bench` (docs/PERFORMANCE.md): a throwaway server, the propagation
of a change from one replica to the subscribers of two others, POST /banner/next through
PostgreSQL with one and three replicas, and pgbench running the same transaction shape against
the same server at the same concurrency."""

import glob
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time


class Postgres:
    """PostgreSQL from Debian's package, in a fresh temporary folder, on a Unix socket there; as
    the `postgres` user when run as root. Durable as shipped (fsync and synchronous_commit on).

    The folder is under the system's temporary directory, not the checkout: the `postgres` user
    must be able to reach it, and a checkout may sit below a folder only root can enter."""

    def __init__(self):
        self.bin = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))[-1]
        folder = tempfile.mkdtemp(prefix="banner-bench-postgres.")
        self.folder = folder
        self.prefix = []
        if os.getuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(folder, user.pw_uid, user.pw_gid)
            self.prefix = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        self.run("initdb", "-D", f"{folder}/data", "-U", "banner", "--auth=trust", "-E", "UTF8")
        self.run("pg_ctl", "start", "-w", "-D", f"{folder}/data", "-l", f"{folder}/server.log",
                 "-o", f"-k {folder} -c listen_addresses='' -c max_connections=200")
        self.databases = 0

    def run(self, program, *arguments, capture=False):
        result = subprocess.run(self.prefix + [f"{self.bin}/{program}", *arguments], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{program} {' '.join(arguments)}: {result.stdout}{result.stderr}")
        return result.stdout

    def create_database(self):
        self.databases += 1
        name = f"bench_{self.databases}"
        self.run("psql", "-h", self.folder, "-U", "banner", "-d", "postgres", "-q", "-c", f"CREATE DATABASE {name}")
        return name

    def uri(self, database):
        return f"postgresql://banner@/{database}?host={self.folder}"

    def version(self):
        """`15.18` from `postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`."""
        return re.search(r"\) (\d+(?:\.\d+)*)", self.run("postgres", "--version")).group(1)

    def stop(self):
        subprocess.run(self.prefix + [f"{self.bin}/pg_ctl", "stop", "-w", "-m", "fast", "-D", f"{self.folder}/data"],
                       capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


def pgbench_same_shape(postgres, database, clients, seconds):
    """Transactions per second of pgbench running a command's transaction shape (lock the carousel's
    row, update it, NOTIFY, commit) on the carousel `default` the service created in `database`."""
    script = os.path.join(postgres.folder, "command.sql")
    with open(script, "w") as file:
        file.write("BEGIN;\n"
                   "SELECT position, version FROM carousels WHERE name = 'default' FOR UPDATE;\n"
                   "UPDATE carousels SET position = (position + 1) % 5, version = version + 1 WHERE name = 'default';\n"
                   "SELECT pg_notify('banner_carousel_changes', 'default');\n"
                   "COMMIT;\n")
    os.chmod(script, 0o644)
    output = postgres.run("pgbench", "-h", postgres.folder, "-U", "banner", "-n", "-f", script, "-c", str(clients),
                          "-j", str(clients), "-T", str(seconds), "-M", "prepared", database)
    return float(re.search(r"tps = ([\d.]+)", output).group(1))


class Subscriber:
    """A client of GET /banner/events on one replica: the arrival time of each version it is sent."""

    def __init__(self, port):
        self.arrivals = {}
        self.changed = threading.Condition()
        self.connection = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.connection.sendall(b"GET /banner/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()
        with self.changed:  # subscribed once the current state has arrived
            if not self.changed.wait_for(lambda: self.arrivals, timeout=30):
                raise RuntimeError(f"no first event from the replica on port {port}")

    def read(self):
        buffer = b""
        try:
            while chunk := self.connection.recv(65536):
                arrival = time.perf_counter()
                buffer += chunk
                while (match := re.search(rb"\ndata: (\{.*?\})\n\n", buffer)):
                    buffer = buffer[match.end():]
                    version = json.loads(match.group(1))["version"]
                    with self.changed:
                        self.arrivals.setdefault(version, arrival)
                        self.changed.notify_all()
        except OSError:
            pass

    def arrival(self, version, timeout=10):
        with self.changed:
            self.changed.wait_for(lambda: version in self.arrivals, timeout=timeout)
            return self.arrivals.get(version)

    def close(self):
        self.connection.close()


def request(port, method, path):
    """One request on a fresh connection: the answer's body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    return answer.split(b"\r\n\r\n", 1)[1]


def propagation(replicas, commands):
    """`commands` times POST /banner/next on replica A, and the time from sending it until the
    subscribers of replicas B and C both have the event of its version: p50, p99, max in ms."""
    subscribers = [Subscriber(replica.port) for replica in replicas[1:]]
    delays, missing = [], 0
    try:
        for _ in range(commands):
            sent = time.perf_counter()
            version = json.loads(request(replicas[0].port, "POST", "/banner/next"))["version"]
            arrivals = [subscriber.arrival(version) for subscriber in subscribers]
            if None in arrivals:
                missing += 1
                continue
            delays.append((max(arrivals) - sent) * 1000)
    finally:
        for subscriber in subscribers:
            subscriber.close()
    delays.sort()
    return {"commands": commands, "received": len(delays), "missing": missing,
            "p50": delays[len(delays) // 2], "p99": delays[min(len(delays) - 1, int(len(delays) * 0.99))],
            "max": delays[-1]}


def post_rates(replicas, seconds, connections, post_load):
    """POST /banner/next under wrk on every replica at once (the connections shared out): the sum of
    their rates, the requests completed, and how much `version` grew (read once all agree)."""
    before = json.loads(request(replicas[0].port, "GET", "/banner"))["version"]
    results = [None] * len(replicas)

    def load(number):
        results[number] = post_load(replicas[number], seconds, max(1, connections // len(replicas)))

    threads = [threading.Thread(target=load, args=(number,)) for number in range(len(replicas))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    deadline = time.time() + 30
    while True:
        versions = {json.loads(request(replica.port, "GET", "/banner"))["version"] for replica in replicas}
        if len(versions) == 1 or time.time() > deadline:
            break
        time.sleep(0.05)  # polling a condition, with a deadline
    return {"rate": sum(rate for rate, _, _ in results), "completed": sum(count for _, _, count in results),
            "applied": max(versions) - before, "agreed": len(versions) == 1}

