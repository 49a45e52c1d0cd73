"""How much time `nexo plugin check` adds on top of the plugin's own start-up and shutdown.

The baseline is the least a host can do with the same plugin (the real nexoai SDK fixture):
spawn it, send ``initialize``, read the reply, send ``shutdown``, read the reply, wait for
the exit. The check does that plus the unknown-method probe, the tool-catalog checks
(jsonschema's metaschema) and the bookkeeping. Both are measured side by side in one run;
the overhead is the difference of the medians. Target: well under a second.

Run: ``.venv/bin/python benchmarks/check.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SDK_PLUGIN = REPO / "tests" / "fixtures" / "plugins" / "sdk_plugin"

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import precompile  # noqa: E402


def prepare(scratch: Path) -> Path:
    """The SDK fixture with its command pointed at this interpreter (which has nexoai)."""
    root = scratch / "sdkdemo"
    shutil.copytree(SDK_PLUGIN, root)
    manifest = root / "nexo-plugin.toml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace(
            'command = "python3"', f"command = {json.dumps(sys.executable)}"
        ),
        encoding="utf-8",
    )
    return root


def bare_handshake(root: Path) -> None:
    """The minimal host: initialize, shutdown, wait for the exit."""
    process = subprocess.Popen(
        [sys.executable, "main.py"],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    for request_id, method, params in (
        (1, "initialize", {"nexo_version": "0.1.5"}),
        (2, "shutdown", {"reason": "benchmark"}),
    ):
        frame = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        process.stdin.write(json.dumps(frame).encode() + b"\n")
        process.stdin.flush()
        reply = json.loads(process.stdout.readline())
        assert reply["id"] == request_id, reply
    process.wait(timeout=30)
    process.stdin.close()
    process.stdout.close()


def in_process_check(root: Path) -> None:
    from nexo_pkg.check import run_check

    report = run_check(root)
    assert report.ok, report.checks


def cli_check(root: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "check", str(root)],
        check=True,
        capture_output=True,
    )


def cli_floor(root: Path) -> None:
    """The CLI's start-up alone (imports of every command module), for comparison."""
    subprocess.run([sys.executable, "-m", "nexo_pkg", "--version"], check=True, capture_output=True)


def median_seconds(action: Callable[[Path], None], root: Path, runs: int) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        action(root)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=9)
    options = parser.parse_args()
    precompile()  # an installed nexo-pkg runs from .pyc files
    with tempfile.TemporaryDirectory() as scratch:
        root = prepare(Path(scratch))
        # Warm the file cache and import everything once so the runs compare like for like.
        bare_handshake(root)
        in_process_check(root)
        variants: dict[str, Callable[[Path], None]] = {
            "bare": bare_handshake,
            "check": in_process_check,
            "cli": cli_check,
            "floor": cli_floor,
        }
        rounds: dict[str, list[float]] = {name: [] for name in variants}
        # Interleave the variants so machine load drifts affect them alike.
        for _ in range(options.runs):
            for name, action in variants.items():
                rounds[name].append(median_seconds(action, root, 1))
    bare = statistics.median(rounds["bare"])
    check = statistics.median(rounds["check"])
    cli = statistics.median(rounds["cli"])
    floor = statistics.median(rounds["floor"])
    print(f"runs per variant:                    {options.runs}")
    print(f"bare handshake (plugin's own cost):  {bare * 1000:8.1f} ms")
    print(f"run_check, in process:               {check * 1000:8.1f} ms")
    print(f"nexo plugin check, cold CLI:         {cli * 1000:8.1f} ms")
    print(f"check overhead, in process:          {(check - bare) * 1000:8.1f} ms")
    print(f"nexo --version (CLI start-up):       {floor * 1000:8.1f} ms")
    print(f"check overhead, cold CLI:            {(cli - bare) * 1000:8.1f} ms")
    print(f"  of which beyond CLI start-up:      {(cli - bare - floor) * 1000:8.1f} ms")
    print(f"ratio run_check / bare:              {check / bare:8.2f}x")


if __name__ == "__main__":
    main()
