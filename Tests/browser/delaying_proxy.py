"""A TCP proxy on 127.0.0.1 that delays what it forwards, as a slow network between a screen and
the service does: every chunk in either direction is held `delay` seconds (plus up to `jitter`),
and chunks of event streams going to the client are held `hold_events` seconds more (a proxy that
buffers streams, or a congested link). Order is kept within each direction. `cut()` takes the
network away (every connection closed, new ones closed as they come) until `restore()`.
`lose_answers = b"/views"` loses the answer to each request whose first bytes hold that text: the
request reaches the service, then the connection is closed instead of the answer (a flush whose
answer a flaky network lost); `answers_lost` counts them.

Used by the browser tests (Tests/browser) and the flip-spread benchmark (bench/).
"""

import queue
import random
import socket
import threading
import time


class DelayingProxy:
    def __init__(self, upstream_port, delay=0.0, jitter=0.0, hold_events=0.0, seed=None):
        self.upstream = ("127.0.0.1", upstream_port)
        self.delay = delay
        self.jitter = jitter
        self.hold_events = hold_events
        self.random = random.Random(seed)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.closed = threading.Event()
        self.is_cut = threading.Event()
        self.lock = threading.Lock()  # a connection is either cut or kept, never let through
        self.lose_answers = None
        self.answers_lost = 0
        self.connections = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self.closed.set()
        self.listener.close()
        for connection in list(self.connections):
            for end in connection:
                try:
                    end.close()
                except OSError:
                    pass

    def cut(self):
        """The network goes: what is open is closed, and so is every new connection, until restore()."""
        with self.lock:
            self.is_cut.set()
            connections, self.connections = self.connections, []
        for connection in connections:
            for end in connection:
                try:
                    # shutdown wakes the threads blocked reading it; close alone would not.
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()

    def restore(self):
        self.is_cut.clear()

    def _accept(self):
        while not self.closed.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            for end in (client, upstream):
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                if self.is_cut.is_set():
                    client.close()
                    upstream.close()
                    continue
                self.connections.append((client, upstream))
            self._connect(client, upstream)

    def _connect(self, client, upstream):
        # Set once the client asks this connection for an event stream: from then on it only
        # carries that stream.
        streaming = threading.Event()
        # Set when a request whose answer is to be lost went through.
        losing = threading.Event()

        def watch(chunk):
            if b"/banner/events" in chunk:
                streaming.set()
            if self.lose_answers and self.lose_answers in chunk:
                losing.set()

        def lose():
            if not losing.is_set():
                return False
            self.answers_lost += 1
            for end in (client, upstream):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            return True

        self._pipe(client, upstream, watch, lambda: 0.0)
        self._pipe(upstream, client, lambda chunk: None, lambda: self.hold_events if streaming.is_set() else 0.0, lose)

    def _pipe(self, source, sink, inspect, extra_hold, lose=lambda: False):
        """Reads `source` and writes each chunk to `sink` once its delay has passed."""
        chunks = queue.Queue()

        def read():
            last_release = 0.0
            while True:
                try:
                    chunk = source.recv(65536)
                except OSError:
                    chunk = b""
                inspect(chunk)
                release = time.monotonic() + self.delay + self.random.uniform(0, self.jitter) + extra_hold()
                last_release = max(last_release, release)
                chunks.put((last_release, chunk))
                if not chunk:
                    return

        def write():
            while True:
                release, chunk = chunks.get()
                wait = release - time.monotonic()
                if wait > 0:
                    time.sleep(wait)  # the delay this proxy exists to add
                try:
                    if not chunk:
                        sink.shutdown(socket.SHUT_WR)
                        return
                    if lose():
                        return
                    sink.sendall(chunk)
                except OSError:
                    return

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()
