"""Language server latency: from ``didChange`` to the matching ``publishDiagnostics``.

Starts ``python -m nexo_pkg plugin lsp`` as a real subprocess and talks raw JSON-RPC (LSP
framing) over its pipes. For each debounce setting it opens a manifest, then sends edits that
alternate between a clean and a faulty manifest (so every edit changes the diagnostics) and
times each edit until diagnostics for that document version arrive. It prints min / median /
max per setting: with ``--debounce-ms 0`` the figure is the server's own cost (target
<= 50 ms); with the default debounce it is what an editor sees after the user stops typing.
For scale it also prints the in-process ``lint_source`` time of the same manifests.

Usage: python benchmarks/lsp.py [--edits N] [--manifest PATH]
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MANIFEST = ROOT / "tests" / "lsp" / "fixtures" / "full.toml"
TARGET_MS = 50.0

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import precompile  # noqa: E402


class Connection:
    """One server process and a reader thread that queues every message it sends."""

    def __init__(self, *server_args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "nexo_pkg", "plugin", "lsp", *server_args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.stdin: IO[bytes] = self.process.stdin
        self.messages: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self.reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value.strip())
            body = stream.read(length)
            self.messages.put((time.perf_counter(), json.loads(body)))

    def send(self, message: dict[str, Any]) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        sent = time.perf_counter()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdin.flush()
        return sent

    def request(self, method: str, params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            _, message = self.messages.get(timeout=60)
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def notify(self, method: str, params: Any) -> float:
        return self.send({"method": method, "params": params})

    def wait_diagnostics(self, uri: str, version: int) -> tuple[float, int]:
        """Arrival time and count of the diagnostics published for ``uri`` at ``version``."""
        while True:
            arrived, message = self.messages.get(timeout=60)
            if message.get("method") != "textDocument/publishDiagnostics":
                continue
            params = message["params"]
            if params["uri"] == uri and params.get("version") == version:
                return arrived, len(params["diagnostics"])

    def close(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        self.process.wait(timeout=30)


def measure(debounce_ms: int | None, clean: str, faulty: str, edits: int) -> list[float]:
    """Milliseconds from each didChange to its diagnostics, for one server setting."""
    args = [] if debounce_ms is None else ["--debounce-ms", str(debounce_ms)]
    connection = Connection(*args)
    try:
        connection.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        connection.notify("initialized", {})
        uri = (ROOT / "build" / "bench" / "nexo-plugin.toml").as_uri()
        item = {"uri": uri, "languageId": "toml", "version": 1, "text": clean}
        connection.notify("textDocument/didOpen", {"textDocument": item})
        connection.wait_diagnostics(uri, 1)
        timings: list[float] = []
        for version in range(2, edits + 2):
            text = faulty if version % 2 else clean
            sent = connection.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"text": text}],
                },
            )
            arrived, count = connection.wait_diagnostics(uri, version)
            assert (count > 0) == (text is faulty), "diagnostics do not match the edit"
            timings.append((arrived - sent) * 1000)
        return timings
    finally:
        connection.close()


def report(label: str, timings: list[float]) -> None:
    print(
        f"{label:<40} n={len(timings):<3} min {min(timings):7.1f} ms   "
        f"median {statistics.median(timings):7.1f} ms   max {max(timings):7.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST)
    args = parser.parse_args()
    precompile()  # an installed nexo-pkg runs from .pyc files
    clean = args.manifest.read_text("utf-8")
    faulty = clean.replace('network = "deny"', 'network = "internet"', 1)
    if faulty == clean:
        faulty = clean + "\n[plugin.bogus]\nx = 1\n"

    from nexo_pkg.lint.engine import lint_source

    lint_source(clean)  # the first calls pay for lazy imports
    lint_source(faulty)
    in_process = []
    for text in [clean, faulty] * 50:
        started = time.perf_counter()
        lint_source(text)
        in_process.append((time.perf_counter() - started) * 1000)

    print(f"manifest: {args.manifest.relative_to(ROOT)} ({len(clean)} characters)")
    report("lint_source in process", in_process)
    server_only = measure(0, clean, faulty, args.edits)
    report("didChange -> diagnostics, no debounce", server_only)
    from nexo_pkg.lsp.server import DEFAULT_DEBOUNCE_SECONDS

    debounced = measure(None, clean, faulty, args.edits)
    report(f"... with default {DEFAULT_DEBOUNCE_SECONDS * 1000:.0f} ms debounce", debounced)
    median = statistics.median(server_only)
    verdict = "meets" if median <= TARGET_MS else "misses"
    print(f"median without debounce {median:.1f} ms {verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
