#!/usr/bin/python3
"""What a burst of large uploads leaves in the process (docs/MEDIA.md, memory).

Starts the given banner-server on a fresh SQLite store, makes 14 distinct 39-megapixel JPEGs with
`vips` (8.6 MB each), uploads them at once (the queue takes what it holds, the rest get 503), and
prints the process's RSS before and after (RssAnon, RssFile). A figure, not a test: what it says
depends on the allocator and the machine.

Usage: bench/upload_memory.py [BANNER_SERVER]   (default .build/release/banner-server)
"""
import concurrent.futures
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

COUNT = 14


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/banner-server"
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        images = []
        for index in range(COUNT):
            raw, image = folder / f"noise{index}.v", folder / f"photo{index}.jpg"
            subprocess.run(["vips", "gaussnoise", str(raw), "7000", "5600", "--mean", str(100 + index)], check=True)
            subprocess.run(["vips", "copy", str(raw), f"{image}[Q=40]"], check=True)
            raw.unlink()
            images.append(image.read_bytes())
        server = subprocess.Popen(
            [binary, "--port", "0", "--host", "127.0.0.1", "--store", f"sqlite:{folder / 'store.db'}"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            port = int(re.search(r":(\d+)$", server.stdout.readline().strip()).group(1))
            base = f"http://127.0.0.1:{port}"

            def memory():
                status = Path(f"/proc/{server.pid}/status").read_text()
                return {name: int(value) // 1024 for name, value in re.findall(r"(VmRSS|RssAnon|RssFile):\s+(\d+) kB", status)}

            def upload(body):
                request = urllib.request.Request(
                    base + "/media", data=body, headers={"Content-Type": "image/jpeg"}, method="POST")
                try:
                    return urllib.request.urlopen(request, timeout=600).status
                except urllib.error.HTTPError as error:
                    return error.code

            urllib.request.urlopen(base + "/banner").read()
            before = memory()
            with concurrent.futures.ThreadPoolExecutor(COUNT) as pool:
                statuses = list(pool.map(upload, images))
            after = memory()
            print(f"{statuses.count(201)} of {COUNT} uploads taken ({statuses.count(503)} answered 503)")
            print(f"MiB before: {before}")
            print(f"MiB after:  {after}")
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
