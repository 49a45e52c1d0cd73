"""A fleet of hosts: N plugin roots x M plugins, from one registry versus each from GitHub.

Both sides serve the same M unsigned plugins (one linux tarball each, ~1 MiB incompressible
payload) on loopback:

* **registry**: the plugins are pushed to a real CNCF distribution registry and locked once;
  every host runs ``nexo plugin sync --frozen --lock L --dest D`` with its own ``NEXO_HOME``
  (a cold blob cache, as a fresh container or host has).
* **github**: every host runs ``nexo plugin install acme/pN@v1.0.0`` for each plugin against
  the loopback GitHub API server.

Hosts run ``--parallel`` at a time. Reported: wall time of the whole fleet, median time per
host, and requests per host (the registry's access log; the GitHub server's request log) --
the figure that matters against GitHub's 60 unauthenticated API calls an hour per address.

Run: ``.venv/bin/python benchmarks/fleet.py [--hosts 20] [--plugins 5] [--parallel 4]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, precompile  # noqa: E402
from support.github_server import GitHubServer  # noqa: E402
from support.registry import start_registry  # noqa: E402
from support.tarballs import manifest_text, plugin_tarball, sidecar_line  # noqa: E402

TARGET = "x86_64-unknown-linux-gnu"


def _env(home: Path, api: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if "proxy" not in k.lower() and k not in {"GITHUB_TOKEN", "GH_TOKEN", "NEXO_GITHUB_TOKEN"}
    }
    env.update(
        NEXO_HOME=str(home),
        NEXO_GITHUB_API_BASE=api,
        NEXO_INSTALL_TARGET=TARGET,
        NO_PROXY="127.0.0.1",
        DOCKER_CONFIG=str(home / "docker"),
    )
    return env


def _nexo(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "nexo_pkg", "plugin", *args],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip


def _timed_hosts(count: int, parallel: int, job: object) -> tuple[float, list[float]]:
    def run(index: int) -> float:
        start = time.perf_counter()
        job(index)  # type: ignore[operator]
        return time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        per_host = list(pool.map(run, range(count)))
    return time.perf_counter() - start, per_host


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--plugins", type=int, default=5)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--payload-kib", type=int, default=1024)
    args = parser.parse_args()
    precompile()  # an installed nexo-pkg runs from .pyc files

    with tempfile.TemporaryDirectory(prefix="nexo-fleet-bench-") as scratch:
        work = Path(scratch)
        registry = start_registry(work / "registry")
        github = GitHubServer()
        github.start()
        try:
            ids = [f"p{n}" for n in range(args.plugins)]
            project = work / "fleet"
            project.mkdir()
            wanted = []
            publisher = _env(work / "publisher", github.url)
            for plugin_id in ids:
                data = plugin_tarball(
                    plugin_id, "1.0.0", payload=os.urandom(args.payload_kib * 1024)
                )
                name = f"{plugin_id}-1.0.0-{TARGET}.tar.gz"
                github.publish(
                    "acme", plugin_id, "v1.0.0",
                    {name: data, name + ".sha256": sidecar_line(data, name).encode(),
                     "nexo-plugin.toml": manifest_text(plugin_id, "1.0.0").encode()},
                )  # fmt: skip
                _nexo(publisher, "mirror", f"acme/{plugin_id}@v1.0.0",
                      registry.ref(f"fleet/{plugin_id}"), "--plain-http")  # fmt: skip
                wanted.append(
                    f'[plugins.{plugin_id}]\nsource = "{registry.ref(f"fleet/{plugin_id}")}"\n'
                )
            (project / "nexo-plugins.toml").write_text("\n".join(wanted))
            _nexo(publisher, "lock", "-f", str(project / "nexo-plugins.toml"), "--plain-http")
            lock = project / "nexo-plugins.lock"

            before = registry.all_requests()
            github_before = len(github.requests)

            def sync_host(index: int) -> None:
                host = work / f"oci-host-{index}"
                _nexo(_env(host / "home", github.url), "sync", "--lock", str(lock),
                      "--dest", str(host / "plugins"), "--frozen", "--plain-http")  # fmt: skip

            oci_wall, oci_hosts = _timed_hosts(args.hosts, args.parallel, sync_host)
            oci_requests = registry.all_requests() - before
            oci_blob_gets = registry.blob_gets()
            assert len(github.requests) == github_before, "a frozen registry sync asked GitHub"

            def install_host(index: int) -> None:
                host = work / f"gh-host-{index}"
                env = _env(host / "home", github.url)
                for plugin_id in ids:
                    _nexo(env, "install", f"acme/{plugin_id}@v1.0.0", "--yes",
                          "--dest", str(host / "plugins"))  # fmt: skip

            gh_wall, gh_hosts = _timed_hosts(args.hosts, args.parallel, install_host)
            gh_requests = len(github.requests) - github_before
        finally:
            github.stop()
            registry.stop()

    print(machine())
    print(f"{args.hosts} hosts x {args.plugins} plugins, {args.parallel} hosts at a time")
    print(f"{'':28}{'fleet wall':>12}{'median/host':>14}{'requests/host':>16}")
    print(
        f"{'sync --frozen (registry)':28}{oci_wall:>11.2f}s{statistics.median(oci_hosts):>13.2f}s"
        f"{oci_requests / args.hosts:>16.1f}"
    )
    print(
        f"{'install x M (GitHub API)':28}{gh_wall:>11.2f}s{statistics.median(gh_hosts):>13.2f}s"
        f"{gh_requests / args.hosts:>16.1f}"
    )
    print(
        f"registry blob GETs in total: {oci_blob_gets}; GitHub API requests per host: "
        f"{gh_requests / args.hosts:.0f} (the unauthenticated limit is 60/hour per address)"
    )
    print(f"ratio fleet wall registry/github: {oci_wall / gh_wall:.2f}x")


if __name__ == "__main__":
    main()
