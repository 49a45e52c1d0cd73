"""Install speed and memory on realistic plugins, side by side with curl + sha256sum + tar.

For each tree shape of ``trees.py`` (``vendored``: 3,000 files / 75 MiB; ``small``: 10,000
small files; ``tiny``: a 3.5 KiB plugin; ``one-big-file``: one 100 MiB file), packed as
``nexo plugin pack`` packs and published on the loopback GitHub server of the test suite,
compare, interleaved (round-robin, so machine-load drifts hit every variant alike):

* ``nexo plugin install acme/bench@vX --yes --json --dest D`` (resolve, download, checksum,
  one-pass check and extraction, payload check, receipt, syncfs, rename), a cold process
  with an empty ``NEXO_HOME`` (so an empty blob cache: every run downloads the asset);
* ``curl -sSfo f URL && sha256sum -c f.sha256 && tar -xzf f -C dir && sync -f dir``
  (durability is part of the job on both sides);
* ``python3 -c pass`` (the interpreter's own start-up, for the tiny plugin's target);
* optionally ``--before DIR``: the same install with the package imported from another
  checkout (``PYTHONPATH=DIR``; ``python -P`` keeps the working directory out of the
  path), for before/after figures.

Every figure is min / median / max; ratios are medians of per-run ratios. Peak RSS comes from
``/usr/bin/time`` (the process tree alone), the largest over the measured runs (not the
warm-up run, whose time is discarded too). The ``small`` shape holds 10,104 entries, over the
10,000-entry default, so every install passes ``--max-entries 20000``.

Run: ``.venv/bin/python benchmarks/install.py [--runs 7] [--shapes vendored,small,tiny]
[--before /path/to/old/checkout]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import trees  # noqa: E402
from common import Stats, interleave, paired_ratios, wall_and_rss  # noqa: E402
from support.github_server import GitHubServer  # noqa: E402
from support.tarballs import asset_name, sidecar_line  # noqa: E402

MiB = 1024 * 1024
PLUGIN_ID = "bench"
VERSIONS = {"vendored": "3.0.0", "small": "10.0.0", "tiny": "0.1.0", "one-big-file": "100.0.0"}
# Runs of each variant before the measured ones: their time is discarded, and so is their peak
# RSS (the first nexo run compiles every module into the fresh bytecode cache: several MiB more).
WARMUP = 1
LIMITS = ["--max-entries", "20000", "--max-download-size", "300M", "--max-total-size", "300M",
          "--max-entry-size", "300M"]  # fmt: skip


@dataclass
class ShapeResult:
    """The interleaved measurements of one shape."""

    shape: str
    description: str
    files: int
    tree_bytes: int
    asset_bytes: int
    wall: dict[str, Stats]
    rss: dict[str, int] = field(default_factory=dict)

    def ratio(self, variant: str = "nexo") -> Stats:
        return paired_ratios(self.wall[variant], self.wall["baseline"])


@dataclass
class Release:
    shape: str
    tag: str
    url: str
    sidecar: Path
    files: int
    tree_bytes: int
    asset_bytes: int


def publish(server: GitHubServer, scratch: Path, shape: str) -> Release:
    """Build the shape's tree, pack it, publish it with its sidecar; drop the tree."""
    version = VERSIONS[shape]
    tree = trees.plugin_tree(scratch / f"tree-{shape}", shape, PLUGIN_ID, version)
    files, size = trees.tree_stats(tree)
    name = asset_name(PLUGIN_ID, version)
    data = trees.tar_gz(tree, scratch / name)
    shutil.rmtree(tree)
    (scratch / name).unlink()
    assets = {name: data, name + ".sha256": sidecar_line(data, name).encode()}
    release = server.publish("acme", PLUGIN_ID, f"v{version}", assets)
    sidecar = scratch / f"{shape}.sha256"
    sidecar.write_text(sidecar_line(data, "f"))
    url = f"{server.url}/acme/{PLUGIN_ID}/releases/download/{release.tag}/{name}"
    return Release(shape, release.tag, url, sidecar, files, size, len(data))


def environment(server: GitHubServer, scratch: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "NEXO_GITHUB_TOKEN",
            "GITHUB_TOKEN",
            "GH_TOKEN",
            "PYTHONPATH",
            "PYTHONDONTWRITEBYTECODE",
        )
    }
    # An installed nexo-pkg runs from .pyc files (pip compiles them); the warm-up run writes
    # them under the scratch directory, so no checkout is touched and no run compiles. The
    # code measured is this checkout's, whatever checkout the interpreter's editable install
    # points at.
    env.update(
        NEXO_HOME=str(scratch / "home"),
        NEXO_GITHUB_API_BASE=server.url,
        NO_PROXY="127.0.0.1",
        PYTHONPYCACHEPREFIX=str(scratch / "pycache"),
        PYTHONPATH=str(HERE.parent),
    )
    return env


_COUNTER = iter(range(1_000_000))


def nexo_variant(
    scratch: Path, env: dict[str, str], release: Release, rss: list[int], path: Path | None = None
) -> Callable[[], float]:
    """One cold ``nexo plugin install`` (the package from ``path`` when given)."""
    run_env = dict(env)
    if path is not None:
        run_env["PYTHONPATH"] = str(path)

    def run() -> float:
        number = next(_COUNTER)
        dest = scratch / f"dest-{number}"
        # A fresh NEXO_HOME per run: its blob cache is empty, so every run downloads the
        # asset as the baseline's curl does (a warm cache would skip the download).
        home = scratch / f"home-{number}"
        run_env["NEXO_HOME"] = str(home)
        command = [sys.executable, "-P", "-m", "nexo_pkg", "plugin", "install",
                   f"acme/{PLUGIN_ID}@{release.tag}", "--yes", "--json", "--dest", str(dest),
                   *LIMITS]  # fmt: skip
        seconds, peak = wall_and_rss(command, env=run_env)
        rss.append(peak)
        shutil.rmtree(dest)
        shutil.rmtree(home, ignore_errors=True)
        return seconds

    return run


def baseline_variant(
    scratch: Path, env: dict[str, str], release: Release, rss: list[int]
) -> Callable[[], float]:
    """``curl && sha256sum -c && tar -xzf && sync -f`` into a fresh directory."""

    def run() -> float:
        work = scratch / f"base-{next(_COUNTER)}"
        out = work / "out"
        out.mkdir(parents=True)
        shutil.copyfile(release.sidecar, work / "f.sha256")
        script = (
            f"cd {work} && curl -sSfo f {release.url} && sha256sum -c --quiet f.sha256 "
            f"&& tar -xzf f -C out && sync -f out"
        )
        seconds, peak = wall_and_rss(["bash", "-c", script], env=env)
        rss.append(peak)
        shutil.rmtree(work)
        return seconds

    return run


def python_pass() -> float:
    seconds, _ = wall_and_rss([sys.executable, "-c", "pass"])
    return seconds


@contextmanager
def loopback() -> Iterator[tuple[GitHubServer, Path]]:
    with GitHubServer() as server, tempfile.TemporaryDirectory(prefix="nexo-bench-") as name:
        yield server, Path(name)


def measure(shapes: list[str], runs: int, before: Path | None = None) -> list[ShapeResult]:
    """Interleaved runs of every variant for each shape."""
    for tool in ("curl", "sha256sum", "tar", "sync", "/usr/bin/time"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed for the baseline")
    results = []
    with loopback() as (server, scratch):
        env = environment(server, scratch)
        for shape in shapes:
            release = publish(server, scratch, shape)
            rss: dict[str, list[int]] = {"nexo": [], "baseline": [], "nexo (before)": []}
            variants: dict[str, Callable[[], float | None]] = {
                "nexo": nexo_variant(scratch, env, release, rss["nexo"]),
                "baseline": baseline_variant(scratch, env, release, rss["baseline"]),
            }
            if before is not None:
                variants["nexo (before)"] = nexo_variant(
                    scratch, env, release, rss["nexo (before)"], before
                )
            if shape == "tiny":
                variants["python3 -c pass"] = python_pass
            wall = interleave(variants, runs, warmup=WARMUP)
            peaks = {k: max(v[WARMUP:]) for k, v in rss.items() if v[WARMUP:]}
            results.append(
                ShapeResult(
                    shape, trees.SHAPES[shape][0], release.files, release.tree_bytes,
                    release.asset_bytes, wall, peaks,
                )
            )  # fmt: skip
            server.releases.clear()
            server.assets.clear()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--shapes", default="vendored,small,tiny,one-big-file")
    parser.add_argument("--before", type=Path, help="a checkout of an earlier nexo-pkg")
    args = parser.parse_args()
    results = measure(args.shapes.split(","), args.runs, args.before)
    for result in results:
        print(
            f"\n{result.shape}: {result.description}; {result.files} files, "
            f"{result.tree_bytes / MiB:.1f} MiB, asset {result.asset_bytes / MiB:.1f} MiB"
        )
        for name, stats in result.wall.items():
            peak = result.rss.get(name)
            memory = f"  peak RSS {peak / MiB:.1f} MiB" if peak else ""
            print(f"  {name:<16} {stats.describe('s', 1.0, 2)}{memory}")
        print(f"  ratio nexo / baseline: {result.ratio().median:.2f}x (median of per-run ratios)")
        if "nexo (before)" in result.wall:
            print(f"  ratio before / baseline: {result.ratio('nexo (before)').median:.2f}x")


if __name__ == "__main__":
    main()
