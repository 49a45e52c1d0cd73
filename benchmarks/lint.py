"""Lint speed against SPEC §2's targets, measured side by side in one run.

1. Cold process: median wall time of ``nexo plugin lint FILE`` vs ``check-jsonschema
   --schemafile schemas/nexo-plugin.schema.json FILE`` (target ratio <= 0.6), runs interleaved
   so both see the same machine load.
2. In-process: ``lint_source`` per manifest, warm (target <= 2 ms).
3. Batch: one ``nexo plugin lint DIR`` over 1,000 manifests (target <= 2 s).

Usage: python benchmarks/lint.py [--runs N] [--file PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schemas" / "nexo-plugin.schema.json"
CORPUS = ROOT / "tests" / "fixtures" / "manifests"
SHARED_FIXTURES = Path(os.environ.get("NEXO_TEST_FIXTURES") or ROOT.parent / "shared" / "fixtures")
REFERENCE = SHARED_FIXTURES / "reference-manifests"
BIN = Path(sys.executable).parent

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import precompile  # noqa: E402


def _wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False)
    return time.perf_counter() - start


def cold(file: Path, runs: int) -> tuple[float, float]:
    nexo = [str(BIN / "nexo"), "plugin", "lint", str(file)]
    baseline = [str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA), str(file)]
    for command in (nexo, baseline):  # warm the OS file cache
        _wall(command)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(runs):
        ours.append(_wall(nexo))
        theirs.append(_wall(baseline))
    return statistics.median(ours), statistics.median(theirs)


def in_process(rounds: int = 200) -> tuple[float, float]:
    from nexo_pkg.lint.engine import lint_source

    valid = [p.read_text("utf-8") for p in sorted((CORPUS / "valid").glob("*.toml"))]
    valid += [p.read_text("utf-8") for p in sorted(REFERENCE.glob("*.toml"))]
    invalid = [p.read_text("utf-8") for p in sorted((CORPUS / "invalid").glob("*.toml"))]
    for text in valid + invalid:  # first call pays the lazy imports
        lint_source(text)

    def per_manifest(texts: list[str]) -> float:
        start = time.perf_counter()
        for _ in range(rounds):
            for text in texts:
                lint_source(text)
        return (time.perf_counter() - start) / (rounds * len(texts)) * 1000

    return per_manifest(valid), per_manifest(invalid)


def batch(count: int = 1000) -> float:
    sources = sorted((CORPUS / "valid").glob("*.toml")) + sorted(REFERENCE.glob("*.toml"))
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        for index in range(count):
            target = root / f"plugin{index:04d}" / "nexo-plugin.toml"
            target.parent.mkdir()
            shutil.copyfile(sources[index % len(sources)], target)
        command = [str(BIN / "nexo"), "plugin", "lint", str(root)]
        return min(_wall(command) for _ in range(3))


def calibration() -> float:
    """Seconds for a fixed pure-Python loop: how loaded the machine is while measuring."""
    start = time.perf_counter()
    sum(range(10_000_000))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--file", type=Path, default=CORPUS / "valid" / "full.toml")
    arguments = parser.parse_args()
    precompile()  # an installed nexo-pkg runs from .pyc files
    print(f"machine: sum(range(10**7)) took {calibration():.2f} s; higher means a busier machine")

    ours, theirs = cold(arguments.file, arguments.runs)
    print(f"cold, {arguments.file.name}, median of {arguments.runs}:")
    print(f"  nexo plugin lint   {ours * 1000:7.1f} ms")
    print(f"  check-jsonschema   {theirs * 1000:7.1f} ms")
    print(f"  ratio              {ours / theirs:7.2f}   (target <= 0.60)")
    invalid_file = CORPUS / "invalid" / "several_faults_in_file_order.toml"
    ours_bad, theirs_bad = cold(invalid_file, max(5, arguments.runs // 3))
    print(f"cold, {invalid_file.name} (invalid):")
    print(
        f"  ratio              {ours_bad / theirs_bad:7.2f}   ({ours_bad * 1000:.1f} ms vs "
        f"{theirs_bad * 1000:.1f} ms)"
    )
    valid_ms, invalid_ms = in_process()
    print("in-process lint_source, per manifest:")
    print(f"  valid manifests    {valid_ms:7.3f} ms   (target <= 2 ms)")
    print(f"  invalid manifests  {invalid_ms:7.3f} ms")
    seconds = batch()
    print(f"batch: 1000 manifests in one invocation: {seconds:.2f} s   (target <= 2 s)")


if __name__ == "__main__":
    main()
