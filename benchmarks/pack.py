"""Pack speed against GNU tar on an already-vendored tree of ~2,000 files (SPEC §3: <= 1.3x).

Builds a plugin project whose ``src/`` holds ~2,000 real Python source files copied from this
interpreter's site-packages (so compression sees realistic input) and no requirements (nothing
to vendor), then times, interleaved and side by side:

* ``pack``: :func:`nexo_pkg.pack.build.pack` in-process (lint, tree walk, audit, tar.gz,
  sidecars), and the cold ``nexo plugin pack`` command for reference;
* ``tar``: ``tar --sort=name --mtime=@N --owner=0 --group=0 --numeric-owner -czf`` on the
  same tree.

Prints the medians and the ratio pack / tar. :func:`measure_shapes` does the same, cold CLI
against tar with the peak RSS of each, for the tree shapes of ``trees.py`` (3,000 files /
75 MiB, 10,000 small files, a tiny plugin, one 100 MiB file: memory must stay flat).

Usage: ``python benchmarks/pack.py [--files N] [--rounds R] [--shapes vendored,...]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from nexo_pkg.pack.build import PackOptions, pack

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import trees  # noqa: E402
from common import Stats, interleave, precompile, wall_and_rss  # noqa: E402

EPOCH = 1_700_000_000
# Runs of each variant before the measured ones (time and peak RSS discarded).
WARMUP = 1
MANIFEST = """\
[plugin]
id = "bench"
version = "1.0.0"
name = "Bench"
description = "Benchmark plugin."
min_nexo_version = ">=0.1.0"

[plugin.entrypoint]
command = "./bin/bench"
"""


def build_project(root: Path, files: int) -> Path:
    """Copy ``files`` .py files from site-packages into ``root/src`` and write a manifest."""
    source = Path(sysconfig.get_paths()["purelib"])
    src = root / "src"
    src.mkdir(parents=True)
    (root / "nexo-plugin.toml").write_text(MANIFEST)
    (src / "main.py").write_text("print('bench')\n")
    copied = 0
    for path in sorted(source.rglob("*.py")):
        if "__pycache__" in path.parts or path.is_symlink():
            continue
        target = src / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        copied += 1
        if copied >= files:
            break
    return root


def time_pack(project: Path, out: Path) -> float:
    start = time.perf_counter()
    pack(PackOptions(project=project, out=out, source_date_epoch=EPOCH), environ={})
    return time.perf_counter() - start


def time_cli(project: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project), "--out", str(out)],
        check=True,
        capture_output=True,
        env={
            "SOURCE_DATE_EPOCH": str(EPOCH),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(HERE.parent),
        },
    )
    return time.perf_counter() - start


def time_tar(project: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [
            "tar",
            "--sort=name",
            f"--mtime=@{EPOCH}",
            "--owner=0",
            "--group=0",
            "--numeric-owner",
            "-czf",
            str(out / "bench.tar.gz"),
            "-C",
            str(project),
            "nexo-plugin.toml",
            "src",
        ],
        check=True,
    )
    return time.perf_counter() - start


def measure_shapes(shapes: list[str], runs: int) -> dict[str, tuple[dict[str, Stats], int, int]]:
    """Per shape: interleaved wall times of the cold ``nexo plugin pack`` and of tar, and
    the peak RSS (bytes) of each, the largest over the measured runs (not the warm-up run,
    which writes the bytecode cache)."""
    with tempfile.TemporaryDirectory(prefix="nexo-bench-pack-") as scratch:
        return {shape: _measure_shape(Path(scratch), shape, runs) for shape in shapes}


def _measure_shape(root: Path, shape: str, runs: int) -> tuple[dict[str, Stats], int, int]:
    project = trees.pack_project(root / shape, shape, "bench", "1.0.0")
    peaks: dict[str, list[int]] = {"pack": [], "tar": []}
    out = root / f"out-{shape}"
    out.mkdir()

    def cli() -> float:
        command = [sys.executable, "-m", "nexo_pkg", "plugin", "pack", str(project),
                   "--out", str(out)]  # fmt: skip
        env = {
            "SOURCE_DATE_EPOCH": str(EPOCH),
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(HERE.parent),
        }
        seconds, peak = wall_and_rss(command, env=env)
        peaks["pack"].append(peak)
        return seconds

    def gnu_tar() -> float:
        command = ["tar", "--sort=name", f"--mtime=@{EPOCH}", "--owner=0", "--group=0",
                   "--numeric-owner", "-czf", str(out / "bench.tar.gz"), "-C", str(project),
                   "nexo-plugin.toml", "src"]  # fmt: skip
        seconds, peak = wall_and_rss(command)
        peaks["tar"].append(peak)
        return seconds

    timings = interleave(
        {"nexo plugin pack (cold CLI)": cli, "GNU tar -czf": gnu_tar}, runs, warmup=WARMUP
    )
    shutil.rmtree(project)
    return timings, max(peaks["pack"][WARMUP:]), max(peaks["tar"][WARMUP:])


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--shapes", default="", help="also measure these trees.py shapes")
    args = parser.parse_args()
    precompile()  # an installed nexo-pkg runs from .pyc files
    for shape, (timings, pack_peak, tar_peak) in measure_shapes(
        [s for s in args.shapes.split(",") if s], args.rounds
    ).items():
        print(f"{shape}: " + "; ".join(f"{k} {v.describe()}" for k, v in timings.items()))
        print(f"  peak RSS: pack {pack_peak / 2**20:.1f} MiB, tar {tar_peak / 2**20:.1f} MiB")
    with tempfile.TemporaryDirectory(prefix="nexo-bench-pack-") as scratch:
        root = Path(scratch)
        project = build_project(root / "project", args.files)
        count = sum(1 for p in (project / "src").rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in (project / "src").rglob("*") if p.is_file())
        out_pack, out_tar, out_cli = root / "pack", root / "tar", root / "cli"
        out_tar.mkdir()
        time_pack(project, out_pack)  # warm the page cache for both tools
        time_tar(project, out_tar)
        packs, tars, clis = [], [], []
        for _ in range(args.rounds):
            packs.append(time_pack(project, out_pack))
            tars.append(time_tar(project, out_tar))
            clis.append(time_cli(project, out_cli))
        pack_size = next(out_pack.glob("*.tar.gz")).stat().st_size
        tar_size = (out_tar / "bench.tar.gz").stat().st_size
    pack_median = statistics.median(packs)
    tar_median = statistics.median(tars)
    cli_median = statistics.median(clis)
    print(f"tree: {count} files, {size / 1e6:.1f} MB; {args.rounds} rounds, medians")
    print(f"tar -czf (gzip -6):        {tar_median * 1000:8.1f} ms  {tar_size / 1e6:.2f} MB")
    print(f"pack (in-process):         {pack_median * 1000:8.1f} ms  {pack_size / 1e6:.2f} MB")
    print(f"nexo plugin pack (cold):   {cli_median * 1000:8.1f} ms")
    print(f"ratio pack / tar:          {pack_median / tar_median:8.2f}x  (target <= 1.30x)")
    print(f"ratio cold CLI / tar:      {cli_median / tar_median:8.2f}x")


if __name__ == "__main__":
    main()
