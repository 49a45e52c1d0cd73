"""Timing helpers shared by the benchmark scripts.

- :class:`Stats`: min / median / max of a list of seconds.
- :func:`interleave`: run several variants round-robin so machine-load drifts hit them alike.
- :func:`wall` and :func:`wall_and_rss`: time a command (and its peak RSS via ``/usr/bin/time``,
  which measures the child tree alone, unlike ``wait4`` on a child forked from a big parent).
- :func:`machine`: what the figures were taken on (CPU, cores, RAM, Python, OS, load).
- :func:`precompile`: nexo-pkg's modules compiled to ``.pyc``, as an installed package has them.
- :func:`console_script`: the ``nexo`` console script pip writes for a wheel of this checkout,
  in a virtual environment of its own (no editable-install finder on its path).

Usage from another script in this directory::

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import Stats, interleave, wall
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Stats:
    """Summary of repeated measurements (seconds, or any unit the caller keeps to)."""

    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        if not values:
            raise ValueError("no measurements")
        return cls(tuple(values))

    @property
    def min(self) -> float:
        return min(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def max(self) -> float:
        return max(self.values)

    @property
    def runs(self) -> int:
        return len(self.values)

    def scaled(self, factor: float) -> Stats:
        return Stats(tuple(value * factor for value in self.values))

    def describe(self, unit: str = "ms", factor: float = 1000.0, digits: int = 1) -> str:
        """``min / median / max unit`` for a table cell."""
        return (
            f"{self.min * factor:.{digits}f} / {self.median * factor:.{digits}f} / "
            f"{self.max * factor:.{digits}f} {unit}"
        )


def paired_ratios(ours: Stats, theirs: Stats) -> Stats:
    """Per-run ratios of two interleaved series (run i of one over run i of the other)."""
    return Stats(tuple(a / b for a, b in zip(ours.values, theirs.values, strict=True)))


def interleave(
    variants: Mapping[str, Callable[[], float | None]], runs: int, *, warmup: int = 1
) -> dict[str, Stats]:
    """Run every variant ``warmup`` times (discarded), then ``runs`` rounds round-robin.

    A variant returns its own measurement, or ``None`` to be timed from the outside.
    """
    for _ in range(warmup):
        for action in variants.values():
            action()
    collected: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, action in variants.items():
            started = time.perf_counter()
            measured = action()
            collected[name].append(
                measured if measured is not None else time.perf_counter() - started
            )
    return {name: Stats.of(values) for name, values in collected.items()}


def wall(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    cwd: Path | None = None,
) -> float:
    """Wall seconds of ``command`` (output discarded), run in ``cwd``; raises if it fails and
    ``check``."""
    started = time.perf_counter()
    result = subprocess.run(
        list(command),
        env=None if env is None else dict(env),
        capture_output=True,
        check=False,
        cwd=cwd,
    )
    elapsed = time.perf_counter() - started
    if check and result.returncode != 0:
        raise RuntimeError(
            f"{command[0]} exited {result.returncode}: {result.stderr.decode(errors='replace')}"
        )
    return elapsed


def wall_and_rss(
    command: Sequence[str], *, env: Mapping[str, str] | None = None
) -> tuple[float, int]:
    """Wall seconds and peak RSS in bytes of ``command``'s process tree (``/usr/bin/time``)."""
    with tempfile.NamedTemporaryFile(prefix="rss-", suffix=".txt") as report:
        wrapped = ["/usr/bin/time", "-f", "%M", "-o", report.name, *command]
        elapsed = wall(wrapped, env=env)
        kib = int(Path(report.name).read_text().split()[-1])
    return elapsed, kib * 1024


def precompile(root: Path | None = None) -> None:
    """Compile nexo-pkg's modules to ``.pyc`` once, as installing the package does, so that
    no run pays for compiling them (``PYTHONDONTWRITEBYTECODE`` would otherwise make every
    cold process of a source checkout compile every module it imports)."""
    import compileall

    compileall.compile_dir(
        str(root or Path(__file__).resolve().parent.parent / "nexo_pkg"), quiet=1
    )


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def machine() -> dict[str, str]:
    """A description of the machine and its current load, for the report."""
    load1, load5, load15 = os.getloadavg()
    return {
        "CPU": _cpu_model(),
        "cores": str(os.cpu_count()),
        "RAM": f"{_memory_gib():.1f} GiB",
        "Python": f"{platform.python_implementation()} {platform.python_version()}",
        "OS": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "libc": " ".join(platform.libc_ver()),
        "load average (1/5/15 min)": f"{load1:.2f} / {load5:.2f} / {load15:.2f}",
        "interpreter": sys.executable,
    }


def console_script(scratch: Path, checkout: Path | None = None) -> Path:
    """Build a wheel of ``checkout`` (default: this one), install it without dependencies
    into a new virtual environment under ``scratch`` with this interpreter's pip, and return
    the ``nexo`` console script pip wrote there: the program users run, whose start-up
    includes the wrapper's own imports (``re``, ``sys``), unlike ``python -m nexo_pkg``.
    Enough for ``--version``; commands that need the dependencies are not run through it."""
    source = checkout or Path(__file__).resolve().parent.parent
    wheels = scratch / "wheel"
    venv = scratch / "venv"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(source)], check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    wheel = next(wheels.glob("nexo_pkg-*.whl"))
    subprocess.run([*pip, "--python", str(venv / "bin" / "python"), "install", "--no-deps",
                    str(wheel)], check=True, capture_output=True)  # fmt: skip
    return venv / "bin" / "nexo"
