"""Which transport the one HTTP client (``nexo_pkg/net/client.py``) stands on: the
``http.client`` one of ``nexo_pkg/net/transport.py`` (``DirectTransport``) or httpx's own
``HTTPTransport`` (httpcore + h11).

Two figures, each against a loopback server answering a 3.5 KiB document:

- cold: a fresh process that imports httpx (without its command-line module, as
  ``net/client.py`` does), builds a client on the transport and makes one GET, against
  ``python -c pass``; this is what a small ``install`` or ``sync`` pays before its first byte;
- warm: 200 GETs over one kept-alive connection in this process (per-request cost once
  everything is imported);
- modules: how many modules the cold process has loaded after its GET (a count that does
  not move with the machine's load).

Interleaved runs, min / median / max, and the ratio HTTPTransport / DirectTransport.

Run: ``.venv/bin/python benchmarks/http_transport.py [--runs 15]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from common import Stats, interleave, machine, paired_ratios, wall  # noqa: E402

BODY = b"x" * 3584
WARM_REQUESTS = 200

_COLD = """
import sys
sys.modules["httpx._main"] = None
import httpx
del sys.modules["httpx._main"]
{make}
with httpx.Client(transport=transport, trust_env=False) as client:
    assert len(client.get({url!r}).read()) == {size}
if {count}:
    print(len(sys.modules))
"""
TRANSPORTS = {
    "DirectTransport": (
        "from nexo_pkg.net.transport import DirectTransport\ntransport = DirectTransport()"
    ),
    "HTTPTransport": "transport = httpx.HTTPTransport()",
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes: without this, delayed ACKs would make
    # every request wait ~40 ms whatever the client.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        del format, args


def _warm(make: str, url: str) -> float:
    """Seconds per GET over one kept-alive connection, everything imported."""
    namespace: dict[str, Any] = {}
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    namespace["httpx"] = httpx
    exec(make, namespace)  # noqa: S102 (the two fixed snippets above)
    with httpx.Client(transport=namespace["transport"], trust_env=False) as client:
        client.get(url).read()
        started = time.perf_counter()
        for _ in range(WARM_REQUESTS):
            client.get(url).read()
        return (time.perf_counter() - started) / WARM_REQUESTS


class _Server(ThreadingHTTPServer):
    # A backlog of 128, as the tests' servers (tests/support/http_kit.py): the default 5
    # drops the SYNs of a burst of cold clients, which then wait a second to retry.
    request_queue_size = 128


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=15)
    arguments = parser.parse_args()
    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/doc"
    env = {"PYTHONPATH": str(HERE.parent), "PATH": "/usr/bin:/bin", "NO_PROXY": "*"}
    variants: dict[str, Callable[[], float | None]] = {
        "python -c pass": partial(wall, [sys.executable, "-c", "pass"], env=env)
    }
    for name, make in TRANSPORTS.items():
        code = _COLD.format(make=make, url=url, size=len(BODY), count=False)
        variants[name] = partial(wall, [sys.executable, "-c", code], env=env)
    cold = interleave(variants, arguments.runs)
    warm = interleave(
        {name: partial(_warm, make, url) for name, make in TRANSPORTS.items()}, arguments.runs
    )
    modules = {
        name: subprocess.run(
            [sys.executable, "-c", _COLD.format(make=make, url=url, size=len(BODY), count=True)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for name, make in TRANSPORTS.items()
    }
    server.shutdown()
    print(", ".join(f"{key}: {value}" for key, value in machine().items()))
    print(f"cold (import + first GET, {arguments.runs} runs, min / median / max):")
    for name, stats in cold.items():
        print(f"  {name:16} {stats.describe()}")
    base = cold["python -c pass"]
    # Differences of the minima and of the medians: pairing single runs under load would
    # subtract one run's noise from another's.
    picks: dict[str, Callable[[Stats], float]] = {
        "min": lambda stats: stats.min,
        "median": lambda stats: stats.median,
    }
    for label, pick in picks.items():
        direct = pick(cold["DirectTransport"]) - pick(base)
        own = pick(cold["HTTPTransport"]) - pick(base)
        print(
            f"  over python ({label}): DirectTransport {direct * 1000:.1f} ms, HTTPTransport "
            f"{own * 1000:.1f} ms, ratio {own / direct:.2f} x"
        )
    print(f"warm (per GET over one connection, {WARM_REQUESTS} GETs a run):")
    for name, stats in warm.items():
        print(f"  {name:16} {stats.describe('us', 1e6)}")
    ratio = paired_ratios(warm["HTTPTransport"], warm["DirectTransport"])
    print(f"  HTTPTransport / DirectTransport: {ratio.describe('x', 1.0, 2)}")
    print("modules loaded by the cold process:")
    for name, count in modules.items():
        print(f"  {name:16} {count}")


if __name__ == "__main__":
    main()
