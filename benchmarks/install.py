"""Install speed and memory against SPEC §5's targets, measured side by side in one run.

For an unsigned noarch plugin of about 10 MiB and about 100 MiB (incompressible payload),
published on a loopback GitHub API server, compare

* ``nexo plugin install acme/bench@vX --yes --json --dest D`` (resolve, download, checksum,
  pre-scan, payload checks, staged extraction, receipt, rename), with
* ``curl -sSfo f URL && sha256sum -c f.sha256 && tar -xzf f -C dir``.

Runs are interleaved so both see the same machine load; the median wall time of each is
reported with the ratio (target <= 1.3x) and the peak RSS of each process tree, read from
``wait4`` (target: flat in the asset size, <= 80 MiB).

Run: ``.venv/bin/python benchmarks/install.py [--runs N] [--sizes 10,100]``.
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

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.github_server import GitHubServer  # noqa: E402
from support.tarballs import (  # noqa: E402
    asset_name,
    file,
    plugin_members,
    sidecar_line,
    tar_bytes,
)

MiB = 1024 * 1024
PLUGIN_ID = "bench"


def build_tarball(size_mib: int) -> bytes:
    """A valid plugin whose payload is ``size_mib`` MiB of random bytes, gzip level 1."""
    import gzip

    version = f"{size_mib}.0.0"
    members = plugin_members(PLUGIN_ID, version)
    # Just under the size so the asset itself stays within the 100 MiB default limit.
    members.append(file("lib/plugin/payload.bin", os.urandom(size_mib * MiB - 256 * 1024)))
    return gzip.compress(tar_bytes(members), compresslevel=1, mtime=0)


def timed(command: list[str], env: dict[str, str], rss_file: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of ``command`` and the children it waited for.

    RSS comes from ``/usr/bin/time -f %M``: a child forked straight from this (large) process
    would report this process's RSS as its own high-water mark.
    """
    wrapped = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file), *command]
    start = time.perf_counter()
    result = subprocess.run(
        wrapped, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({result.returncode}): {result.stderr.decode()}")
    return elapsed, int(rss_file.read_text().split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="10,100", help="asset sizes in MiB, comma-separated")
    args = parser.parse_args()
    nexo = REPO / ".venv" / "bin" / "nexo"
    for tool in ("curl", "sha256sum", "tar", "/usr/bin/time"):
        if shutil.which(tool) is None:
            raise SystemExit(f"{tool} is needed for the baseline")

    with GitHubServer() as server, tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        env = dict(os.environ)
        env.update(
            NEXO_HOME=str(scratch / "home"),
            NEXO_GITHUB_API_BASE=server.url,
            NO_PROXY="127.0.0.1",
        )
        for name in ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"):
            env.pop(name, None)
        print(
            f"{'asset':>9} {'nexo s':>8} {'curl+tar s':>11} {'ratio':>6} "
            f"{'nexo RSS':>9} {'baseline RSS':>13}"
        )
        for size in (int(part) for part in args.sizes.split(",")):
            version = f"{size}.0.0"
            data = build_tarball(size)
            name = asset_name(PLUGIN_ID, version)
            release = server.publish(
                "acme",
                PLUGIN_ID,
                f"v{version}",
                {name: data, name + ".sha256": sidecar_line(data, name).encode()},
            )
            url = f"{server.url}/acme/{PLUGIN_ID}/releases/download/{release.tag}/{name}"
            sidecar = scratch / "f.sha256"
            sidecar.write_text(sidecar_line(data, "f"))
            ours: list[float] = []
            theirs: list[float] = []
            our_rss = their_rss = 0
            for run in range(args.runs):
                dest = scratch / f"dest-{size}-{run}"
                seconds, rss = timed(
                    [
                        str(nexo),
                        "plugin",
                        "install",
                        f"acme/{PLUGIN_ID}@{release.tag}",
                        "--yes",
                        "--json",
                        "--dest",
                        str(dest),
                        "--max-download-size",
                        "200M",
                    ],
                    env,
                    scratch / "rss",
                )
                ours.append(seconds)
                our_rss = max(our_rss, rss)
                shutil.rmtree(dest)
                out = scratch / f"out-{size}-{run}"
                out.mkdir()
                script = (
                    f"curl -sSfo f {url} && sha256sum -c --quiet f.sha256 && tar -xzf f -C {out}"
                )
                seconds, rss = timed(
                    ["bash", "-c", f"cd {scratch} && {script}"], env, scratch / "rss"
                )
                theirs.append(seconds)
                their_rss = max(their_rss, rss)
                shutil.rmtree(out)
                (scratch / "f").unlink()
            ours_median = statistics.median(ours)
            theirs_median = statistics.median(theirs)
            print(
                f"{len(data) / MiB:7.1f}Mi {ours_median:8.3f} {theirs_median:11.3f} "
                f"{ours_median / theirs_median:5.2f}x {our_rss / 1024:7.1f}Mi "
                f"{their_rss / 1024:11.1f}Mi"
            )
    print("targets: ratio <= 1.30x at 100 MiB; nexo peak RSS <= 80 MiB and flat in asset size")


if __name__ == "__main__":
    main()
