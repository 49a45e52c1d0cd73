"""``sync --frozen`` and ``lock`` of a fleet of realistic plugins from a local registry, against
a sequential shell pipeline over the same tarballs, for 1, 5, 20 and 50 plugins.

Every plugin is shaped like a real release (``trees.fill_vendored``: 1,500 files of Python
sources and binary-like data, about 6 MiB, packed as ``nexo plugin pack`` packs) and pushed,
unsigned, to a real CNCF distribution registry on loopback. Side by side, interleaved, each
run onto an empty root with a cold blob cache (its own ``NEXO_HOME``), after an ``os.sync()`` so
that no run pays for writing back the files of the one before; the trees of earlier runs are
set aside, not removed, until the benchmark ends (``--remove-trees``: removed before each run),
so that no run pays for the filesystem skipping the thousands of inodes just freed (ext4
without a journal does, for a minute: docs/benchmarks.md). Each variant's CPU time (user +
system of its process tree) is printed with its row:

* **baseline**: for each plugin in turn ``curl -sSfo f BLOB_URL && sha256sum -c && mkdir d &&
  tar -xzf f -C d``, then one ``sync -f`` of the root;
* **sync --jobs 1**: ``nexo plugin sync --frozen`` handling the plugins one after another;
* **sync**: the same with the default ``--jobs``.

``lock`` of the largest fleet is timed the same way, ``--jobs 1`` against the default, each
run from an empty lock and a cold blob cache; both must write the same bytes.

``--workload uniform`` builds every plugin of 1,500 files of exactly 4 KiB instead (100 to a
directory; Python-like text, every tenth file random bytes: about 6 MiB, a third of it
incompressible per file but no large file), the shape an independent run used and the one
where per-file costs, not bytes, decide.

``--bounds`` adds two rows to each sync row, to tell what bounds the ratio on this machine:

* **baseline, 2 at a time**: the same pipeline in two shell processes side by side (the
  plugins dealt alternately), then one ``sync -f``: what the pipeline's own tools reach with
  both cores;
* **sync, preloaded**: ``sync --frozen`` with the default ``--jobs``, forked from this process
  once it has imported every module a cold ``sync`` of the same lock imports (listed by one
  such run before the row): the run without the interpreter's start and the imports.

``--latency-ms 0,5,20`` repeats the largest fleet's ``lock`` rows and a ``sync`` row
(baseline included; ``--latency-sync-count`` plugins) through a proxy that delays every byte
by that one-way latency in each direction (``fleet_proxy.py``, in its own process), as a
registry across a network would; 0 is the registry on loopback, without the proxy.

Run: ``.venv/bin/python benchmarks/fleet_scale.py [--counts 1,5,20,50] [--runs 3]
[--workload realistic|uniform] [--latency-ms 0,5,20] [--latency-sync-count 20]
[--skip-scale] [--skip-lock] [--bounds] [--before OLD_CHECKOUT]``; the uniform workload as
measured in docs/benchmarks.md: ``--workload uniform --counts 8 --runs 5 --skip-lock``.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import hashlib
import importlib
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from common import Stats, interleave, machine, paired_ratios, precompile, wall  # noqa: E402
from fleet_proxy import latency_proxy  # noqa: E402
from support.registry import Registry, start_registry  # noqa: E402
from support.tarballs import launcher_text, manifest_text  # noqa: E402
from trees import fill_uniform, fill_vendored  # noqa: E402

from nexo_pkg.fleet.pool import DEFAULT_JOBS  # noqa: E402

JOBS = str(DEFAULT_JOBS)  # the default `--jobs`, passed explicitly so the tables say it

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

    def project(self, count: int, host: str | None = None) -> Path:
        """A project locking the first ``count`` plugins from ``host`` (default: the
        registry itself; a proxy in front of it otherwise)."""
        host = host or self.registry.host
        directory = self.work / f"project-{count}-{host.replace(':', '-')}"
        if not directory.exists():
            directory.mkdir()
            sources = {p: f"oci://{host}/fleet/{p}" for p in self.ids[:count]}
            (directory / "nexo-plugins.toml").write_text(
                "".join(f'[plugins.{p}]\nsource = "{ref}"\n\n' for p, ref in sources.items())
            )
        return directory

    def blob_url(self, plugin_id: str, host: str | None = None) -> str:
        return (
            f"http://{host or self.registry.host}/v2/fleet/{plugin_id}/blobs/"
            f"sha256:{self.blobs[plugin_id]}"
        )


def _env(home: Path, code: Path | None = None) -> dict[str, str]:
    """The environment of one run: its own home, no proxies, nexo-pkg imported from ``code``
    (a checkout), by default this one (whatever PYTHONPATH the caller has)."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(NEXO_HOME=str(home), NO_PROXY="127.0.0.1", DOCKER_CONFIG=str(home / "docker"))
    env["PYTHONPATH"] = str(code or REPO)
    return env


def _nexo(*args: str) -> list[str]:
    return [sys.executable, "-m", "nexo_pkg", "plugin", *args]


def build_fleet(
    work: Path,
    count: int,
    *,
    files: int = FILES,
    total_mib: int = TOTAL_MIB,
    workload: str = "realistic",
) -> Fleet:
    """``count`` plugins sharing one vendored tree (each with its own manifest, so its own
    tarball), pushed to a fresh registry: ``realistic`` (``trees.fill_vendored``) or
    ``uniform`` (``trees.fill_uniform``: ``files`` files of 4 KiB)."""
    from nexo_pkg.fleet.publish import push
    from nexo_pkg.fleet.sources import FleetOptions
    from nexo_pkg.install.options import InstallOptions
    from nexo_pkg.pack.archive import ArchiveEntry, write_tar_gz

    registry = start_registry(work / "registry")
    lib = work / "vendored"
    if workload == "uniform":
        fill_uniform(lib, files=files)
    else:
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


def _baseline_script(
    fleet: Fleet, count: int, dest: Path, host: str | None = None, *, streams: int = 1
) -> str:
    """The pipeline over the first ``count`` plugins, then one ``sync -f``; with ``streams``
    above 1, that many shell processes side by side, each with every ``streams``-th plugin."""

    def steps(plugin_id: str) -> list[str]:
        return [
            f"curl -sSfo {plugin_id}.tar.gz {fleet.blob_url(plugin_id, host)}",
            f"echo '{fleet.blobs[plugin_id]}  {plugin_id}.tar.gz' | sha256sum -c --quiet",
            f"mkdir {dest / plugin_id}",
            f"tar -xzf {plugin_id}.tar.gz -C {dest / plugin_id}",
        ]

    lines = ["set -e", f"mkdir -p {dest}", f"cd {fleet.work / 'scratch'}"]
    ids = fleet.ids[:count]
    if streams == 1:
        for plugin_id in ids:
            lines += steps(plugin_id)
    else:
        for first in range(streams):
            stream = [line for plugin_id in ids[first::streams] for line in steps(plugin_id)]
            lines += ["(", "set -e", *stream, ") &", 'streams="$streams $!"']
        # `wait PID` returns that stream's status: a failed stream fails the script.
        lines.append("for stream in $streams; do wait $stream; done")
    lines.append(f"sync -f {dest}")
    return "\n".join(lines)


# Run by one cold `sync` before a --bounds row: writes the names of the modules it imported.
_MODULES_PROBE = """
import json, os, sys
out = os.environ.pop("NEXO_BENCH_MODULES")
exit_now = os._exit
def dump():
    with open(out, "w") as handle:
        json.dump(sorted(sys.modules), handle)
def exit_after_dump(code):
    dump()
    exit_now(code)
os._exit = exit_after_dump
sys.argv = ["nexo", *sys.argv[1:]]
from nexo_pkg.cli.main import main
try:
    main()
finally:
    dump()
"""


def _preload(args: list[str], env: dict[str, str], cwd: Path) -> int:
    """Import into this process every module a cold ``nexo plugin ARGS`` imports (run once,
    in ``env``, to list them); returns how many were imported."""
    listing = cwd / "modules.json"
    subprocess.run(
        [sys.executable, "-c", _MODULES_PROBE, "plugin", *args],
        env={**env, "NEXO_BENCH_MODULES": str(listing)}, cwd=cwd, check=True,
        capture_output=True,
    )  # fmt: skip
    imported = 0
    for name in json.loads(listing.read_text()):
        if name == "__main__" or name in sys.modules:
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(name)
            imported += 1
    return imported


def _forked_nexo(args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall seconds of ``nexo plugin ARGS`` run in a child forked from this process (whatever
    it imported, the child has), with ``env`` and ``cwd``, its output discarded."""
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            # The exit functions this process registered (the temporary work directory's
            # removal among them) are not the child's: nexo's exit runs its own, and would
            # run these too (removing the fleet under the benchmark).
            atexit._clear()
            os.environ.clear()
            os.environ.update(env)
            os.chdir(cwd)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            sys.argv = ["nexo", "plugin", *args]
            from nexo_pkg.cli.main import main

            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"nexo plugin {' '.join(args)} (forked) exited with {status}")
    return elapsed


@dataclass(frozen=True)
class Scale:
    count: int
    baseline: Stats
    sequential: Stats
    concurrent: Stats
    before: Stats | None = None  # default jobs, the --before checkout's code
    cpu: dict[str, Stats] = field(default_factory=dict)  # user + system of each variant's tree
    load: float = 0.0  # 1-minute load average at the end
    two_at_a_time: Stats | None = None  # --bounds: the pipeline in two streams side by side
    preloaded: Stats | None = None  # --bounds: default jobs forked from a process with the imports

    def bounds_line(self) -> str | None:
        """The --bounds rows against the baseline of the same pairs, if measured."""
        if self.two_at_a_time is None or self.preloaded is None:
            return None
        two = paired_ratios(self.two_at_a_time, self.baseline)
        loaded = paired_ratios(self.preloaded, self.baseline)
        return (
            f"bounds of {self.count}: baseline 2 at a time {self.two_at_a_time.describe('s', 1, 2)}"
            f" ({two.describe('x', 1, 2)}); sync preloaded ({JOBS} jobs) "
            f"{self.preloaded.describe('s', 1, 2)} ({loaded.describe('x', 1, 2)})"
        )

    def cpu_line(self) -> str:
        """The CPU time (user + system, the run's process tree) of each variant."""
        spent = ", ".join(f"{name} {stats.describe('s', 1, 2)}" for name, stats in self.cpu.items())
        return f"CPU user+sys of {self.count} plugins: {spent}; load average {self.load:.2f}"


def measure_sync(
    fleet: Fleet,
    count: int,
    runs: int,
    *,
    warmup: int = 1,
    host: str | None = None,
    before: Path | None = None,
    keep_trees: bool = True,
    bounds: bool = False,
) -> Scale:
    project = fleet.project(count, host)
    lock = project / "nexo-plugins.lock"
    if not lock.exists():
        subprocess.run(
            _nexo("lock", "-f", str(project / "nexo-plugins.toml"), "--plain-http"),
            env=_env(fleet.work / "locker"), check=True, capture_output=True,
        )  # fmt: skip
    scratch = fleet.work / "scratch"

    trash = fleet.work / "trash"
    runs_done = itertools.count()

    def fresh() -> Path:
        if scratch.exists():
            if keep_trees:
                # Set aside, not removed: ext4 without a journal (this machine's disk) skips
                # every inode freed in the last minute, one by one, each time it creates a
                # file, so a run right after thousands of files were removed pays for that
                # scan (concurrent writers most: docs/benchmarks.md). Removed with the work
                # directory at the end (a row of 8 uniform plugins sets aside about 1 GiB).
                trash.mkdir(exist_ok=True)
                # Named past what an earlier row of the same fleet set aside.
                aside = trash / f"run{next(runs_done)}"
                while aside.exists():
                    aside = trash / f"run{next(runs_done)}"
                scratch.rename(aside)
            else:
                shutil.rmtree(scratch)
        scratch.mkdir()
        # The previous run's files reach the disk now, not while the next run is timed.
        os.sync()
        return scratch

    cpu: dict[str, list[float]] = {}

    def timed(name: str, command: list[str], **kwargs: Any) -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        elapsed = wall(command, **kwargs)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
        cpu.setdefault(name, []).append(spent)
        return elapsed

    def baseline() -> float:
        root = fresh()
        script = _baseline_script(fleet, count, root / "dest", host)
        return timed("baseline", ["bash", "-c", script])

    def sync_args(root: Path, jobs: str) -> list[str]:
        return [
            "sync", "--lock", str(lock), "--dest", str(root / "dest"), "--frozen",
            "--plain-http", "--jobs", jobs,
        ]  # fmt: skip

    def nexo(name: str, jobs: str, code: Path | None = None) -> Callable[[], float]:
        def run() -> float:
            root = fresh()
            return timed(
                name,
                [sys.executable, "-m", "nexo_pkg", "plugin", *sync_args(root, jobs)],
                env=_env(root / "home", code),
                cwd=fleet.work,  # not this checkout: -m imports from the cwd first
            )  # fmt: skip

        return run

    def two_at_a_time() -> float:
        root = fresh()
        script = _baseline_script(fleet, count, root / "dest", host, streams=2)
        return timed("baseline, 2 at a time", ["bash", "-c", script])

    def preloaded() -> float:
        root = fresh()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        elapsed = _forked_nexo(sync_args(root, JOBS), _env(root / "home"), fleet.work)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent = after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime
        cpu.setdefault("preloaded", []).append(spent)
        return elapsed

    variants = {
        "baseline": baseline,
        "jobs 1": nexo("jobs 1", "1"),
        "default": nexo("default", JOBS),
    }
    if before is not None:
        variants["before"] = nexo("before", JOBS, before)
    if bounds:
        root = fresh()
        _preload(sync_args(root, JOBS), _env(root / "home"), fleet.work)
        variants["baseline, 2 at a time"] = two_at_a_time
        variants["preloaded"] = preloaded
    timings = interleave(variants, runs, warmup=warmup)
    # CPU of the timed runs only (the warm-up ones come first in each list).
    cpu_stats = {name: Stats.of(values[warmup:]) for name, values in cpu.items()}
    return Scale(
        count, timings["baseline"], timings["jobs 1"], timings["default"], timings.get("before"),
        cpu=cpu_stats, load=os.getloadavg()[0],
        two_at_a_time=timings.get("baseline, 2 at a time"), preloaded=timings.get("preloaded"),
    )  # fmt: skip


@dataclass(frozen=True)
class LockRow:
    """``lock`` of one fleet: ``--jobs 1`` and the default jobs (wall, and CPU of the process tree:
    user + system), and the default jobs of the ``--before`` checkout."""

    count: int
    sequential: Stats
    concurrent: Stats
    sequential_cpu: Stats
    concurrent_cpu: Stats
    same_bytes: bool
    before: Stats | None = None

    def line(self) -> str:
        ratio = paired_ratios(self.concurrent, self.sequential)
        then = (
            "" if self.before is None else f", {JOBS} jobs before {self.before.describe('s', 1, 2)}"
        )
        return (
            f"lock of {self.count}: --jobs 1 {self.sequential.describe('s', 1, 2)} "
            f"(CPU {self.sequential_cpu.describe('s', 1, 2)}), {JOBS} jobs "
            f"{self.concurrent.describe('s', 1, 2)} (CPU {self.concurrent_cpu.describe('s', 1, 2)})"
            f", ratio {ratio.describe('x', 1, 2)}, same bytes: {self.same_bytes}{then}; "
            f"load average {os.getloadavg()[0]:.2f}"
        )


def measure_lock(
    fleet: Fleet, count: int, runs: int, host: str | None = None, before: Path | None = None
) -> LockRow:
    """``lock --jobs 1`` and with the default jobs (and those with the ``before`` checkout's code),
    each from an empty lock and a cold cache; whether the two lock files are byte-identical."""
    project = fleet.project(count, host)
    written: dict[str, bytes] = {}
    cpu: dict[str, list[float]] = {"1": [], JOBS: []}

    def run(jobs: str, code: Path | None = None) -> Callable[[], float]:
        def once() -> float:
            scratch = fleet.work / "lock-scratch"
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir()
            os.sync()  # as in measure_sync: no earlier run's writes in this one's time
            out = scratch / "nexo-plugins.lock"
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            elapsed = wall(
                _nexo("lock", "-f", str(project / "nexo-plugins.toml"), "--lock", str(out),
                      "--plain-http", "--jobs", jobs),
                env=_env(scratch / "home", code),
                cwd=fleet.work,
            )  # fmt: skip
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if code is None:
                written[jobs] = out.read_bytes()
                cpu[jobs].append(after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime)
            return elapsed

        return once

    # The sync rows before it warmed the registry and the page cache.
    variants = {"jobs 1": run("1"), "default": run(JOBS)}
    if before is not None:
        variants["before"] = run(JOBS, before)
    timings = interleave(variants, runs, warmup=0)
    return LockRow(
        count,
        timings["jobs 1"],
        timings["default"],
        Stats.of(cpu["1"]),
        Stats.of(cpu[JOBS]),
        written["1"] == written[JOBS],
        timings.get("before"),
    )


def scale_table(scales: list[Scale]) -> list[str]:
    with_before = any(scale.before is not None for scale in scales)
    extra = f" {JOBS} jobs, before | before / baseline |" if with_before else ""
    rows = [
        f"| plugins | baseline wall | sync --jobs 1 | sync ({JOBS} jobs) | --jobs 1 / baseline "
        f"| {JOBS} jobs / baseline |" + extra,
        "|---|---|---|---|---|---|" + ("---|---|" if with_before else ""),
    ]
    for scale in scales:
        one = paired_ratios(scale.sequential, scale.baseline)
        four = paired_ratios(scale.concurrent, scale.baseline)
        row = (
            f"| {scale.count} | {scale.baseline.describe('s', 1, 2)} "
            f"| {scale.sequential.describe('s', 1, 2)} | {scale.concurrent.describe('s', 1, 2)} "
            f"| {one.describe('x', 1, 2)} | {four.describe('x', 1, 2)} |"
        )
        if scale.before is not None:
            then = paired_ratios(scale.before, scale.baseline)
            row += f" {scale.before.describe('s', 1, 2)} | {then.describe('x', 1, 2)} |"
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--counts", default="1,5,20,50")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=FILES, help="files per plugin")
    parser.add_argument("--mib", type=int, default=TOTAL_MIB, help="MiB per plugin, unpacked")
    parser.add_argument(
        "--workload",
        choices=("realistic", "uniform"),
        default="realistic",
        help="realistic: site-packages and data files; uniform: 4 KiB files, every tenth random",
    )
    parser.add_argument(
        "--latency-ms",
        default="",
        help="one-way latencies (ms; 0: no proxy) to repeat the lock and sync rows at",
    )
    parser.add_argument(
        "--latency-sync-count",
        type=int,
        help="plugins of the sync rows at each latency (default: the largest count; 0: none)",
    )
    parser.add_argument(
        "--skip-scale", action="store_true", help="no scaling table (lock, latencies only)"
    )
    parser.add_argument("--skip-lock", action="store_true", help="no lock rows")
    parser.add_argument(
        "--bounds",
        action="store_true",
        help="with each sync row, the pipeline two at a time and a sync forked from a process "
        "that has the imports already (what bounds the ratio on this machine)",
    )
    parser.add_argument(
        "--remove-trees",
        action="store_true",
        help="remove each run's tree before the next run (as before), instead of setting it "
        "aside until the row is done (see docs/benchmarks.md)",
    )
    parser.add_argument(
        "--before", type=Path, help="a checkout of an earlier nexo-pkg: a 4-job column of it"
    )
    parser.add_argument(
        "--work",
        type=Path,
        help="work in this new directory and leave it when done (default: a temporary one, "
        "removed at the end; removing its trees slows file creation on this disk for minutes, "
        "so a benchmark run right after would pay for it)",
    )
    args = parser.parse_args()
    counts = [int(value) for value in args.counts.split(",")]
    latencies = [float(value) for value in args.latency_ms.split(",") if value.strip()]
    largest = max(counts)
    precompile()
    if args.before is not None:
        precompile(args.before / "nexo_pkg")
    if args.work is not None:
        if args.work.exists():  # a new directory: never one holding anything else
            parser.error(f"--work {args.work} exists; name a new directory")
        args.work.mkdir(parents=True)
        place: contextlib.AbstractContextManager[str] = contextlib.nullcontext(str(args.work))
    else:
        place = tempfile.TemporaryDirectory(prefix="nexo-fleet-scale-")
    with place as scratch:
        fleet = build_fleet(
            Path(scratch), largest, files=args.files, total_mib=args.mib, workload=args.workload
        )
        try:
            print(machine(), f"workload {args.workload}")
            if not args.skip_scale:
                scales = []
                for index, count in enumerate(counts):
                    # One warm-up (page cache, registry, .pyc files) before the first row.
                    scales.append(
                        measure_sync(
                            fleet, count, args.runs, warmup=int(index == 0), before=args.before,
                            keep_trees=not args.remove_trees, bounds=args.bounds,
                        )
                    )  # fmt: skip
                    print(f"load average {os.getloadavg()[0]:.2f} after {count} plugins")
                    print("\n".join(scale_table(scales[-1:])[2:]), flush=True)
                    print(scales[-1].cpu_line(), flush=True)
                    bounds_line = scales[-1].bounds_line()
                    if bounds_line is not None:
                        print(bounds_line, flush=True)
                print("\n".join(scale_table(scales)))
            if not args.skip_lock and not latencies:
                print(measure_lock(fleet, largest, args.runs, before=args.before).line())
            synced = largest if args.latency_sync_count is None else args.latency_sync_count
            for one_way in latencies:
                with latency_proxy(fleet.registry.host, one_way_ms=one_way) as host:
                    print(f"-- {one_way:g} ms each way ({host}); load {os.getloadavg()[0]:.2f}")
                    if not args.skip_lock:
                        row = measure_lock(fleet, largest, args.runs, host, args.before)
                        print(row.line(), flush=True)
                    if synced:
                        scale = measure_sync(
                            fleet, synced, args.runs, warmup=0, host=host, before=args.before,
                            keep_trees=not args.remove_trees,
                        )  # fmt: skip
                        print("\n".join(scale_table([scale])), flush=True)
                        print(scale.cpu_line(), flush=True)
        finally:
            fleet.registry.stop()


if __name__ == "__main__":
    main()
