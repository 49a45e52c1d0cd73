"""``sync --frozen`` and ``lock`` of a fleet of realistic plugins from a local registry, against
a sequential shell pipeline over the same tarballs, for 1, 5, 20 and 50 plugins.

Every plugin is shaped like a real release (``trees.fill_vendored``: 1,500 files of Python
sources and binary-like data, about 6 MiB, packed as ``nexo plugin pack`` packs) and pushed,
unsigned, to a real CNCF distribution registry on loopback. Side by side, interleaved, each
run onto an empty root with a cold blob cache (its own ``NEXO_HOME``):

* **baseline**: for each plugin in turn ``curl -sSfo f BLOB_URL && sha256sum -c && mkdir d &&
  tar -xzf f -C d``, then one ``sync -f`` of the root;
* **sync --jobs 1**: ``nexo plugin sync --frozen`` handling the plugins one after another;
* **sync**: the same with the default ``--jobs``.

``lock`` of the largest fleet is timed the same way, ``--jobs 1`` against the default, each
run from an empty lock and a cold blob cache; both must write the same bytes.

Run: ``.venv/bin/python benchmarks/fleet_scale.py [--counts 1,5,20,50] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from common import Stats, interleave, machine, paired_ratios, precompile, wall  # noqa: E402
from support.registry import Registry, start_registry  # noqa: E402
from support.tarballs import launcher_text, manifest_text  # noqa: E402
from trees import fill_vendored  # noqa: E402

VERSION = "1.0.0"
FILES = 1500
TOTAL_MIB = 6


@dataclass(frozen=True)
class Fleet:
    """Plugins pushed to the registry, and a lock naming the first ``count`` of them."""

    registry: Registry
    ids: tuple[str, ...]
    blobs: dict[str, str]  # plugin id -> sha256 of its tarball
    work: Path

    def project(self, count: int) -> Path:
        directory = self.work / f"project-{count}"
        if not directory.exists():
            directory.mkdir()
            sources = {p: self.registry.ref(f"fleet/{p}") for p in self.ids[:count]}
            (directory / "nexo-plugins.toml").write_text(
                "".join(f'[plugins.{p}]\nsource = "{ref}"\n\n' for p, ref in sources.items())
            )
        return directory

    def blob_url(self, plugin_id: str) -> str:
        return (
            f"http://{self.registry.host}/v2/fleet/{plugin_id}/blobs/sha256:{self.blobs[plugin_id]}"
        )


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(NEXO_HOME=str(home), NO_PROXY="127.0.0.1", DOCKER_CONFIG=str(home / "docker"))
    return env


def _nexo(*args: str) -> list[str]:
    return [sys.executable, "-m", "nexo_pkg", "plugin", *args]


def build_fleet(work: Path, count: int, *, files: int = FILES, total_mib: int = TOTAL_MIB) -> Fleet:
    """``count`` plugins sharing one vendored tree (each with its own manifest, so its own
    tarball), pushed to a fresh registry."""
    from nexo_pkg.fleet.publish import push
    from nexo_pkg.fleet.sources import FleetOptions
    from nexo_pkg.install.pipeline import InstallOptions
    from nexo_pkg.pack.archive import ArchiveEntry, write_tar_gz

    registry = start_registry(work / "registry")
    lib = work / "vendored"
    fill_vendored(lib, files=files, total_mib=total_mib, pure=True)
    shared = [
        ArchiveEntry(
            "lib/" + path.relative_to(lib).as_posix(),
            is_dir=path.is_dir(),
            source=None if path.is_dir() else path,
        )
        for path in sorted(lib.rglob("*"))
    ]
    ids = tuple(f"p{number:02d}" for number in range(count))
    blobs: dict[str, str] = {}
    home = work / "publisher"
    for plugin_id in ids:
        dist = work / "dist" / plugin_id
        dist.mkdir(parents=True)
        manifest = dist / "nexo-plugin.toml"
        manifest.write_text(manifest_text(plugin_id, VERSION))
        launcher = work / "dist" / f"{plugin_id}.launcher"
        launcher.write_text(launcher_text())
        launcher.chmod(0o755)
        entries = [
            ArchiveEntry("bin", is_dir=True),
            ArchiveEntry(f"bin/{plugin_id}", executable=True, source=launcher),
            ArchiveEntry("lib", is_dir=True),
            *shared,
            ArchiveEntry("nexo-plugin.toml", source=manifest),
        ]
        tarball = dist / f"{plugin_id}-{VERSION}-noarch.tar.gz"
        with tarball.open("wb") as handle:
            write_tar_gz(sorted(entries, key=lambda e: e.name), handle, mtime=1_700_000_000)
        blobs[plugin_id] = hashlib.sha256(tarball.read_bytes()).hexdigest()
        choices = InstallOptions(dest=home / "plugins", nexo_home=home, plain_http=True)
        options = FleetOptions(choices)
        push(dist, registry.ref(f"fleet/{plugin_id}"), options)
    return Fleet(registry, ids, blobs, work)


def _baseline_script(fleet: Fleet, count: int, dest: Path) -> str:
    lines = ["set -e", f"mkdir -p {dest}", f"cd {fleet.work / 'scratch'}"]
    for plugin_id in fleet.ids[:count]:
        lines += [
            f"curl -sSfo {plugin_id}.tar.gz {fleet.blob_url(plugin_id)}",
            f"echo '{fleet.blobs[plugin_id]}  {plugin_id}.tar.gz' | sha256sum -c --quiet",
            f"mkdir {dest / plugin_id}",
            f"tar -xzf {plugin_id}.tar.gz -C {dest / plugin_id}",
        ]
    lines.append(f"sync -f {dest}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Scale:
    count: int
    baseline: Stats
    sequential: Stats
    concurrent: Stats


def measure_sync(fleet: Fleet, count: int, runs: int, *, warmup: int = 1) -> Scale:
    project = fleet.project(count)
    lock = project / "nexo-plugins.lock"
    if not lock.exists():
        subprocess.run(
            _nexo("lock", "-f", str(project / "nexo-plugins.toml"), "--plain-http"),
            env=_env(fleet.work / "locker"), check=True, capture_output=True,
        )  # fmt: skip
    scratch = fleet.work / "scratch"

    def fresh() -> Path:
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        return scratch

    def baseline() -> float:
        root = fresh()
        return wall(["bash", "-c", _baseline_script(fleet, count, root / "dest")])

    def nexo(jobs: str) -> Callable[[], float]:
        def run() -> float:
            root = fresh()
            return wall(
                _nexo("sync", "--lock", str(lock), "--dest", str(root / "dest"), "--frozen",
                      "--plain-http", "--jobs", jobs),
                env=_env(root / "home"),
            )  # fmt: skip

        return run

    timings = interleave(
        {"baseline": baseline, "jobs 1": nexo("1"), "default": nexo("4")}, runs, warmup=warmup
    )
    return Scale(count, timings["baseline"], timings["jobs 1"], timings["default"])


def measure_lock(fleet: Fleet, count: int, runs: int) -> tuple[Stats, Stats, bool]:
    project = fleet.project(count)
    written: dict[str, bytes] = {}

    def run(jobs: str) -> Callable[[], float]:
        def once() -> float:
            scratch = fleet.work / "lock-scratch"
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            out = scratch / "nexo-plugins.lock"
            elapsed = wall(
                _nexo("lock", "-f", str(project / "nexo-plugins.toml"), "--lock", str(out),
                      "--plain-http", "--jobs", jobs),
                env=_env(scratch / "home"),
            )  # fmt: skip
            written[jobs] = out.read_bytes()
            return elapsed

        return once

    # The sync rows before it warmed the registry and the page cache.
    timings = interleave({"jobs 1": run("1"), "default": run("4")}, runs, warmup=0)
    return timings["jobs 1"], timings["default"], written["1"] == written["4"]


def scale_table(scales: list[Scale]) -> list[str]:
    rows = [
        "| plugins | baseline wall | sync --jobs 1 | sync (4 jobs) | --jobs 1 / baseline "
        "| 4 jobs / baseline |",
        "|---|---|---|---|---|---|",
    ]
    for scale in scales:
        one = paired_ratios(scale.sequential, scale.baseline)
        four = paired_ratios(scale.concurrent, scale.baseline)
        rows.append(
            f"| {scale.count} | {scale.baseline.describe('s', 1, 2)} "
            f"| {scale.sequential.describe('s', 1, 2)} | {scale.concurrent.describe('s', 1, 2)} "
            f"| {one.describe('x', 1, 2)} | {four.describe('x', 1, 2)} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", default="1,5,20,50")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=FILES, help="files per plugin")
    parser.add_argument("--mib", type=int, default=TOTAL_MIB, help="MiB per plugin, unpacked")
    args = parser.parse_args()
    counts = [int(value) for value in args.counts.split(",")]
    precompile()
    with tempfile.TemporaryDirectory(prefix="nexo-fleet-scale-") as scratch:
        fleet = build_fleet(Path(scratch), max(counts), files=args.files, total_mib=args.mib)
        try:
            print(machine())
            scales = []
            for index, count in enumerate(counts):
                # One warm-up (page cache, registry, .pyc files) before the first row only.
                scales.append(measure_sync(fleet, count, args.runs, warmup=int(index == 0)))
                print(f"load average {os.getloadavg()[0]:.2f} after {count} plugins", flush=True)
                print("\n".join(scale_table(scales[-1:])[2:]), flush=True)
            print("\n".join(scale_table(scales)))
            one, four, same = measure_lock(fleet, max(counts), args.runs)
            ratio = paired_ratios(four, one)
            print(
                f"lock of {max(counts)}: --jobs 1 {one.describe('s', 1, 2)}, 4 jobs "
                f"{four.describe('s', 1, 2)}, ratio {ratio.describe('x', 1, 2)}, "
                f"same bytes: {same}; load average {os.getloadavg()[0]:.2f}"
            )
        finally:
            fleet.registry.stop()


if __name__ == "__main__":
    main()
