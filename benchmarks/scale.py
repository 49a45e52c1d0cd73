"""Operator commands on hosts of 1, 10, 100 and 1,000 installed plugins, each command against
its own baseline, side by side in one run.

Every plugin has 47 files (a real manifest, a launcher, the scripted test plugin as its
program, 43 small text modules) and comes from a GitHub release on the loopback stand-in
(``tests/support/github_server.py``), installed by nexo-pkg itself, so its receipt is real.
Every timed run is a cold process started through the ``nexo`` console script pip wrote (as
users run it), interleaved with its baseline (``common.interleave``):

* ``doctor`` with handshakes of 16 plugins: the default ``--jobs`` against ``--jobs 1``;
* ``outdated``: the default ``--jobs`` against ``--jobs 1``, on loopback, behind a slow API
  (every release document answered ``--slow-ms`` late) and through a proxy adding
  ``--rtt-ms`` of round trip (``fleet_proxy.py``); the JSON of both must be the same;
* ``verify`` and ``doctor --no-check``: this checkout against ``--before`` (an older
  checkout, run with its code on ``PYTHONPATH``), when given;
* ``list``: wall time;
* ``lint DIR`` of ``--lint-count`` manifests against a bare ``tomllib`` parse of the same
  files in one process;
* ``nexo --version`` against ``python3 -c pass``;
* ``sync --frozen`` with nothing to do (8 plugins from a real registry on loopback) against
  ``python3 -c pass``.

Run: ``.venv/bin/python benchmarks/scale.py [--counts 1,10,100,1000] [--runs 5]
[--before OLD_CHECKOUT] [--work DIR] [--skip-doctor] [--skip-outdated] [--skip-offline]
[--skip-sync] [--outdated-only] [--offline verify,list]``
(``--outdated-only --runs 5``: the ``outdated`` rows alone, in about two minutes; the ``list``
and ``lint`` rows alone, in under three minutes once ``--work`` holds the hosts: ``--counts
1000 --skip-doctor --skip-outdated --skip-sync --offline list,"doctor --no-check" --work
/tmp/scale``.)
(``--before``: e.g. ``git archive main nexo_pkg | tar -x -C /tmp/before``; ``--work`` keeps
the installed hosts, which take a while to build at 1,000, for the next run).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from common import (  # noqa: E402
    Stats,
    console_script,
    interleave,
    machine,
    paired_ratios,
    precompile,
    wall,
)
from fleet_proxy import latency_proxy  # noqa: E402
from support.github_server import GitHubServer  # noqa: E402
from support.tarballs import (  # noqa: E402
    file,
    manifest_text,
    plugin_members,
    release_assets,
    targz,
)

from nexo_pkg.core.threads import DEFAULT_JOBS  # noqa: E402

SCRIPTED = REPO / "tests" / "fixtures" / "plugins" / "scripted.py"
OFFLINE = ("verify", "doctor --no-check", "list")
FILES = 47
NEXO = Path(sys.executable).with_name("nexo")  # the console script pip wrote


def _members(plugin_id: str) -> list[object]:
    members = plugin_members(plugin_id, "1.0.0")
    program = SCRIPTED.read_text()
    members = [file(m.name, program) if m.name == "lib/plugin/main.py" else m for m in members]
    regular = sum(1 for m in members if m.kind == b"0")
    for index in range(FILES - regular):
        text = f'"""Module {index} of {plugin_id}."""\n\nVALUE = {index}\n' + "# pad\n" * 200
        members.append(file(f"lib/plugin/mod{index:02d}.py", text))
    return members


class Host:
    """A GitHub stand-in and a plugin root where ``count`` plugins were installed from it."""

    def __init__(self, work: Path, server: GitHubServer, count: int) -> None:
        self.work = work
        self.server = server
        self.count = count
        self.home = work / f"home-{count}"
        self.root = work / f"plugins-{count}"
        self.ids = [f"p{count}x{index:04d}" for index in range(count)]

    def env(self, api: str | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("TOKEN")}
        env.update(
            NEXO_HOME=str(self.home),
            NEXO_GITHUB_API_BASE=api or self.server.url,
            NEXO_HTTP_RETRY_BASE_MS="1",
            NO_PROXY="127.0.0.1",
        )
        env.pop("NEXO_CONFIG_DIR", None)
        env.pop("NEXO_DAEMON_VERSION", None)
        return env

    def build(self) -> None:
        """Publish the releases, and install them unless a kept ``--work`` holds them."""
        from nexo_pkg.install.options import InstallOptions
        from nexo_pkg.install.pipeline import install

        for plugin_id in self.ids:
            data = targz(_members(plugin_id))  # type: ignore[arg-type]
            assets = release_assets(plugin_id, "1.0.0", data=data)
            self.server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        if self.root.is_dir() and len(list(self.root.glob("*-1.0.0"))) == self.count:
            return
        saved = dict(os.environ)
        os.environ.update(self.env())
        try:
            options = InstallOptions(dest=self.root, nexo_home=self.home)
            for plugin_id in self.ids:
                install(f"acme/{plugin_id}", options)
        finally:
            os.environ.clear()
            os.environ.update(saved)


# CPU seconds (user + system) of each timed child, by the name of its row's variant.
CPU: dict[str, list[float]] = {}


def _timed(name: str, command: list[str], **kwargs: Any) -> float:
    """``wall(command)``, its child's CPU time kept under ``name``."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed = wall(command, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.setdefault(name, []).append(after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime)
    return elapsed


def _nexo(
    host: Host,
    *args: str,
    before: Path | None = None,
    api: str | None = None,
    name: str | None = None,
) -> Callable[[], float]:
    """A cold ``nexo`` run: through the console script, or as ``python -m nexo_pkg`` with
    the checkout ``before`` on ``PYTHONPATH`` (its CPU time kept under ``name``)."""
    env = host.env(api)
    if before is None:
        command = [str(NEXO), *args]
    else:
        env["PYTHONPATH"] = str(before)
        command = [sys.executable, "-P", "-m", "nexo_pkg", *args]
    if name is not None:
        return lambda: _timed(name, command, env=env, check=False)
    return lambda: wall(command, env=env, check=False)


def _output(host: Host, *args: str, api: str | None = None) -> bytes:
    return subprocess.run(
        [str(NEXO), *args], env=host.env(api), capture_output=True, check=False
    ).stdout


def _row(name: str, ours: Stats, theirs: Stats, target: str) -> str:
    ratio = paired_ratios(ours, theirs)
    return (
        f"| {name} | {theirs.describe('s', 1, 3)} | {ours.describe('s', 1, 3)} | "
        f"{ratio.min:.2f} / {ratio.median:.2f} / {ratio.max:.2f}x | {target} |"
    )


def doctor_rows(host: Host, runs: int) -> list[str]:
    dest = ("--dest", str(host.root))
    variants = {
        "default": _nexo(host, "plugin", "doctor", *dest),
        "jobs1": _nexo(host, "plugin", "doctor", *dest, "--jobs", "1"),
    }
    same = _output(host, "plugin", "doctor", *dest, "--json") == _output(
        host, "plugin", "doctor", *dest, "--json", "--jobs", "1"
    )
    results = interleave(variants, runs)
    name = f"doctor, {host.count} plugins, {DEFAULT_JOBS} jobs / --jobs 1 (same JSON: {same})"
    return [_row(name, results["default"], results["jobs1"], "<= 0.6x")]


class _Timed:
    """A cold ``nexo`` run timed from the outside by :func:`common.interleave`, its CPU time
    (user + system of the child, from ``RUSAGE_CHILDREN``: what a busy machine inflates
    least) kept in :attr:`cpu`, and ``before_each`` (say, emptying the cache) run untimed
    before it."""

    def __init__(
        self, command: list[str], env: dict[str, str], before_each: Callable[[], None] | None
    ) -> None:
        self.command, self.env, self.before_each = command, env, before_each
        self.cpu: list[float] = []

    def __call__(self) -> float:
        if self.before_each is not None:
            self.before_each()
        started = resource.getrusage(resource.RUSAGE_CHILDREN)
        elapsed = wall(self.command, env=self.env, check=False)
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu.append(ended.ru_utime - started.ru_utime + ended.ru_stime - started.ru_stime)
        return elapsed


def _requests(host: Host, args: tuple[str, ...], api: str | None) -> str:
    """``cold / warm`` requests the stand-in received for one run of ``args`` after the
    cache was emptied and for the run after it (the warm one's conditional requests and
    304 answers said), and whether the two printed the same JSON."""
    counts = []
    outputs = []
    for cold in (True, False):
        if cold:
            shutil.rmtree(host.home / "cache", ignore_errors=True)
        host.server.requests.clear()
        outputs.append(_output(host, *args, api=api))
        counts.append(list(host.server.requests))
    warm = counts[1]
    conditional = sum(1 for r in warm if r.headers.get("if-none-match"))
    return (
        f"requests cold {len(counts[0])} / warm {len(warm)} ({conditional} conditional), "
        f"same JSON cold and warm: {outputs[0] == outputs[1]}"
    )


def outdated_rows(
    host: Host, runs: int, *, slow_ms: int, rtt_ms: int, before: Path | None = None
) -> list[str]:
    """The default ``--jobs`` against ``--jobs 1`` (and, with ``before``, against that
    checkout's default), warm (the runs after a first one: what a nightly job does) and,
    through the proxy, cold (the blob cache and the kept answers emptied before each run);
    wall and CPU time, the load average at the start of each row, the requests counted on
    the stand-in."""
    rows = []
    dest = ("--dest", str(host.root))
    args = ("plugin", "outdated", *dest, "--json")

    def empty_cache() -> None:
        shutil.rmtree(host.home / "cache", ignore_errors=True)

    def pair(label: str, api: str | None, target: str, *, cold: bool = False) -> None:
        load = "/".join(f"{value:.2f}" for value in os.getloadavg())
        same = _output(host, *args, api=api) == _output(host, *args, "--jobs", "1", api=api)
        env = host.env(api)
        each = empty_cache if cold else None
        timed = {
            "default": _Timed([str(NEXO), *args], env, each),
            "jobs1": _Timed([str(NEXO), *args, "--jobs", "1"], env, each),
        }
        if before is not None:
            # Both as `python -m nexo_pkg`, each from its own checkout.
            module = [sys.executable, "-P", "-m", "nexo_pkg", *args]
            timed["now -m"] = _Timed(module, {**env, "PYTHONPATH": str(REPO)}, each)
            timed["before -m"] = _Timed(module, {**env, "PYTHONPATH": str(before)}, each)
        results = interleave(dict(timed.items()), runs)
        cpu = {name: Stats.of(t.cpu[-runs:]) for name, t in timed.items()}
        name = f"outdated, {host.count} plugins, {label} (same JSON: {same}; load {load})"
        rows.append(_row(name, results["default"], results["jobs1"], target))
        rows.append(
            f"| the same, CPU (user + system) | {cpu['jobs1'].describe('s', 1, 3)} | "
            f"{cpu['default'].describe('s', 1, 3)} | "
            f"{paired_ratios(cpu['default'], cpu['jobs1']).median:.2f}x (median) | - |"
        )
        if before is not None:
            rows.append(
                _row(f"the same, default jobs, now / before ({label})",
                     results["now -m"], results["before -m"], "-")
            )  # fmt: skip
            rows.append(
                f"| the same, now / before, CPU | {cpu['before -m'].describe('s', 1, 3)} | "
                f"{cpu['now -m'].describe('s', 1, 3)} | "
                f"{paired_ratios(cpu['now -m'], cpu['before -m']).median:.2f}x (median) | - |"
            )
        rows.append(f"| the same, {_requests(host, args, api)} | | | | |")

    pair("loopback", None, "-")
    host.server.slow(slow_ms / 1000, path_contains="/releases/latest")
    try:
        pair(f"API {slow_ms} ms slow", None, "<= 0.35x")
    finally:
        host.server.clear_faults()
    address = host.server.url.removeprefix("http://")
    with latency_proxy(address, one_way_ms=rtt_ms / 2) as proxied:
        target = f"default <= 0.5 s at {host.count}"
        pair(f"{rtt_ms} ms RTT proxy", f"http://{proxied}", target)
        pair(f"{rtt_ms} ms RTT proxy, cold cache", f"http://{proxied}", "-", cold=True)
    return rows


def offline_rows(
    host: Host,
    runs: int,
    before: Path | None,
    only: tuple[str, ...] = OFFLINE,
    wheel: Path | None = None,
) -> list[str]:
    """Each command of ``only`` (with ``before``: as ``python -m nexo_pkg`` from this checkout
    and from ``before``, interleaved); ``list`` also through the console scripts users run:
    this checkout's editable install (its import finder included) and, with ``wheel``, the
    ``nexo`` of a regular install of a wheel (:func:`common.console_script`)."""
    dest = ("--dest", str(host.root))
    rows = []
    commands = {
        "verify": ("plugin", "verify", *dest),
        "doctor --no-check": ("plugin", "doctor", "--no-check", *dest),
        "list": ("plugin", "list", *dest),
    }
    commands = {name: args for name, args in commands.items() if name in only}
    variants: dict[str, Callable[[], float | None]] = {}
    for name, args in commands.items():
        # Beside an older checkout, both run as `python -m nexo_pkg` from their own code.
        label = f"{name}, {host.count} plugins"
        variants[name] = _nexo(host, *args, before=None if before is None else REPO, name=label)
        if before is not None:
            variants[f"{name} (before)"] = _nexo(
                host, *args, before=before, name=f"{label} (before)"
            )
    scripts = {"editable install": NEXO, "wheel": wheel} if "list" in commands else {}
    for label, script in scripts.items():
        if script is not None:
            name = f"list, {host.count} plugins, console script of the {label}"
            command = [str(script), *commands["list"]]
            variants[f"list ({label})"] = functools.partial(
                _timed, name, command, env=host.env(), check=False
            )
    results = interleave(variants, runs)
    for label, script in scripts.items():
        if script is not None:
            stats = results[f"list ({label})"].describe("s", 1, 3)
            rows.append(
                f"| list, {host.count} plugins, console script of the {label} | - | {stats} "
                "| - | <= 0.15 s |"
            )
    for name in commands:
        ours = results[name]
        if before is not None:
            theirs = results[f"{name} (before)"]
            rows.append(_row(f"{name}, {host.count} plugins, now / before", ours, theirs, "-"))
        else:
            rows.append(
                f"| {name}, {host.count} plugins | - | {ours.describe('s', 1, 3)} | - | - |"
            )
    return rows


def lint_row(work: Path, count: int, runs: int) -> str:
    directory = work / "lint"
    if not directory.exists():
        for index in range(count):
            sub = directory / f"group{index // 100:02d}" / f"plugin{index:05d}"
            sub.mkdir(parents=True)
            (sub / "nexo-plugin.toml").write_text(manifest_text(f"plugin{index:05d}", "1.0.0"))
    parse = (
        "import sys, tomllib, pathlib\n"
        "for p in sorted(pathlib.Path(sys.argv[1]).rglob('nexo-plugin.toml')):\n"
        "    tomllib.loads(p.read_text())\n"
    )
    lint, tomllib = f"lint DIR of {count}", f"bare tomllib parse of {count}"
    results = interleave(
        {
            "lint": lambda: _timed(
                lint, [str(NEXO), "plugin", "lint", str(directory)], check=False
            ),
            "tomllib": lambda: _timed(tomllib, [sys.executable, "-c", parse, str(directory)]),
        },
        runs,
    )
    return _row(
        f"lint DIR of {count} manifests / bare tomllib parse",
        results["lint"],
        results["tomllib"],
        "<= 4x",
    )


def startup_row(script: Path, runs: int) -> str:
    results = interleave(
        {
            "version": lambda: wall([str(script), "--version"]),
            # That environment's own interpreter: the same site-packages start-up.
            "pass": lambda: wall([str(script.with_name("python")), "-c", "pass"]),
        },
        runs,
    )
    name = "`nexo --version` (console script of a wheel) / python3 -c pass"
    return _row(name, results["version"], results["pass"], "<= 2x")


def sync_rows(work: Path, runs: int, before: Path | None) -> list[str]:
    """``sync --frozen`` of 8 registry plugins already in line with the lock (nothing to do)
    against ``python3 -c pass``, as ``python -m nexo_pkg`` with this checkout (and
    ``before``) on ``PYTHONPATH``; a real registry on loopback (``fleet_scale.build_fleet``,
    small plugins: the run reads receipts, never a tarball)."""
    import fleet_scale

    fleet = fleet_scale.build_fleet(work / "sync", 8, files=20, total_mib=1)
    project = fleet.project(8)
    home, dest = work / "sync" / "home", work / "sync" / "dest"

    def command(*args: str) -> list[str]:
        return [sys.executable, "-m", "nexo_pkg", "plugin", *args, "--plain-http"]

    env = fleet_scale._env(home)
    for args in (("lock",), ("sync", "--frozen", "--dest", str(dest))):
        subprocess.run(command(*args), cwd=project, env=env, check=True, capture_output=True)
    frozen = command("sync", "--frozen", "--dest", str(dest))
    variants: dict[str, Callable[[], float | None]] = {
        "pass": lambda: wall([sys.executable, "-c", "pass"]),
        "now": lambda: wall(frozen, env=env, cwd=project),
    }
    if before is not None:
        old = fleet_scale._env(home, before)
        variants["before"] = lambda: wall(frozen, env=old, cwd=project)
    results = interleave(variants, runs)
    rows = [
        _row(
            "`sync --frozen`, 8 plugins, nothing to do / python3 -c pass",
            results["now"], results["pass"], "<= 12x",
        )
    ]  # fmt: skip
    if before is not None:
        rows.append(
            _row("the same, before / python3 -c pass", results["before"], results["pass"], "-")
        )
    fleet.registry.stop()
    return rows


@contextlib.contextmanager
def _server() -> Iterator[GitHubServer]:
    with GitHubServer() as server:
        yield server


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--counts", default="1,10,100,1000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path)
    parser.add_argument("--doctor-count", type=int, default=16)
    parser.add_argument("--outdated-count", type=int, default=100)
    parser.add_argument("--slow-ms", type=int, default=50)
    parser.add_argument("--rtt-ms", type=int, default=10)
    parser.add_argument("--lint-count", type=int, default=2000)
    parser.add_argument("--skip-doctor", action="store_true")
    parser.add_argument("--skip-outdated", action="store_true")
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--skip-sync", action="store_true")
    parser.add_argument(
        "--offline",
        default=",".join(OFFLINE),
        help="the offline commands timed at each count (comma-separated)",
    )
    parser.add_argument(
        "--outdated-only",
        action="store_true",
        help="Only the outdated rows (about 2 minutes for 100 plugins on 2 quiet cores).",
    )
    parser.add_argument(
        "--work", type=Path, help="Keep the installed hosts here and use them again next run."
    )
    args = parser.parse_args()
    precompile()
    if args.before is not None:
        precompile(args.before / "nexo_pkg")
    counts = [int(c) for c in args.counts.split(",") if c]
    print("Machine:", json.dumps(machine(), indent=1))
    print()
    print(
        "| what | baseline min / median / max | measured min / median / max "
        "| ratio min / median / max | target |"
    )
    print("|---|---|---|---|---|")
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        server = stack.enter_context(_server())
        if args.work is not None:
            work = args.work
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="nexo-scale-")))
        wheel = None
        if not args.outdated_only:
            wheel = console_script(work / "installed")
            print(startup_row(wheel, args.runs * 3), flush=True)
        hosts: dict[int, Host] = {}

        def host(count: int) -> Host:
            if count not in hosts:
                hosts[count] = Host(work, server, count)
                hosts[count].build()
            return hosts[count]

        if args.outdated_only:
            for line in outdated_rows(
                host(args.outdated_count), args.runs, slow_ms=args.slow_ms,
                rtt_ms=args.rtt_ms, before=args.before,
            ):  # fmt: skip
                print(line, flush=True)
            print(f"\n({time.perf_counter() - started:.0f} s in all; load average after: "
                  f"{' / '.join(f'{v:.2f}' for v in os.getloadavg())})")  # fmt: skip
            return
        if not args.skip_doctor:
            for line in doctor_rows(host(args.doctor_count), args.runs):
                print(line, flush=True)
        if not args.skip_outdated:
            for line in outdated_rows(
                host(args.outdated_count), args.runs, slow_ms=args.slow_ms,
                rtt_ms=args.rtt_ms, before=args.before,
            ):  # fmt: skip
                print(line, flush=True)
        if not args.skip_offline:
            for count in counts:
                only = tuple(name.strip() for name in args.offline.split(","))
                for line in offline_rows(host(count), args.runs, args.before, only, wheel):
                    print(line, flush=True)
        print(lint_row(work, args.lint_count, args.runs), flush=True)
        if not args.skip_sync:
            for line in sync_rows(work, args.runs * 2, args.before):
                print(line, flush=True)
        shutil.rmtree(work / "installed", ignore_errors=True)
    print()
    for name, values in CPU.items():
        # Warm-up runs included: interleave runs every variant once before timing.
        print(f"CPU user+sys, {name}: {Stats.of(values).describe('s', 1, 3)}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print(f"\n({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
