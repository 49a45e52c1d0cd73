"""Cold start of the commands people type first, against the interpreter's own start-up.

Interleaved, each a fresh process: ``python3 -c pass``; ``nexo --version`` through the console
script pip writes for a wheel of this checkout (``common.console_script``: as users run it, the
wrapper's own imports included; ``python -m nexo_pkg --version`` beside it); ``nexo --help``;
``nexo plugin install --help``; ``nexo plugin check`` on the real-SDK fixture plugin, with
the plugin's bare ``initialize`` + ``shutdown`` as its baseline. Targets (SPEC §1, §5):
``--version`` <= 2x ``python3 -c pass``. With ``--before DIR`` every nexo command also runs
with the package imported from another checkout, for before/after figures.

Run: ``.venv/bin/python benchmarks/startup.py [--runs 9] [--before DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check  # noqa: E402
from common import Stats, console_script, interleave, precompile, wall  # noqa: E402

COMMANDS = {
    "python -m nexo_pkg --version": ["--version"],
    "nexo --help": ["--help"],
    "nexo plugin install --help": ["plugin", "install", "--help"],
}


def _nexo(arguments: list[str], path: Path | None) -> Callable[[], float]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # This checkout's code (or the earlier one's), whatever checkout the interpreter's
    # editable install points at.
    env["PYTHONPATH"] = str(path if path is not None else HERE.parent)
    command = [sys.executable, "-P", "-m", "nexo_pkg", *arguments]
    return lambda: wall(command, env=env)


def measure(runs: int, before: Path | None = None) -> dict[str, Stats]:
    """Wall seconds of every variant, interleaved."""
    with tempfile.TemporaryDirectory(prefix="nexo-bench-start-") as scratch:
        plugin = check.prepare(Path(scratch))
        script = console_script(Path(scratch) / "installed")
        variants: dict[str, Callable[[], float | None]] = {
            "python3 -c pass": lambda: wall([sys.executable, "-c", "pass"]),
            "nexo --version (console script)": lambda: wall([str(script), "--version"]),
            # The console script's own interpreter (no editable-install finder on its path).
            "its python3 -c pass": lambda: wall([str(script.with_name("python")), "-c", "pass"]),
        }
        for name, arguments in {
            **COMMANDS,
            "nexo plugin check": ["plugin", "check", str(plugin)],
        }.items():
            variants[name] = _nexo(arguments, None)
            if before is not None:
                variants[f"{name} (before)"] = _nexo(arguments, before)
        variants["plugin initialize + shutdown"] = lambda: check.bare_handshake(plugin)
        return interleave(variants, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--before", type=Path)
    args = parser.parse_args()
    # An installed nexo-pkg runs from .pyc files: no run compiles (PYTHONDONTWRITEBYTECODE).
    precompile()
    if args.before is not None:
        precompile(args.before / "nexo_pkg")
    results = measure(args.runs, args.before)
    floor = results["python3 -c pass"].median
    for name, stats in results.items():
        print(f"{name:<40} {stats.describe()}  ({stats.median / floor:.1f}x python3 -c pass)")
    own = results["nexo --version (console script)"].median / results["its python3 -c pass"].median
    print(f"console script --version / its own python3 -c pass: {own:.2f}x (target <= 2x)")


if __name__ == "__main__":
    main()
