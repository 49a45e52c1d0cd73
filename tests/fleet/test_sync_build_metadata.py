"""``lock`` and ``sync`` order versions as the daemon's ``semver`` crate does, build metadata
included (semver 1.0 ``impl Ord for BuildMetadata``): ``1.0.0+b1 < 1.0.0+b2``, where a model
that drops build metadata (python-semver) calls the two equal. So ``lock`` takes ``+b2`` as the
newest release, and a lock pinning ``+b1`` over an installed ``+b2`` is a downgrade."""

from __future__ import annotations

from pathlib import Path

from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry_env import publish_signed_release

from .conftest import fleet_run

__all__ = ["github_server"]


def _paths(tmp_path: Path) -> tuple[Path, Path, Path]:
    return (
        tmp_path / "nexo-plugins.toml",
        tmp_path / "nexo-plugins.lock",
        tmp_path / "root",
    )


def test_lock_takes_the_highest_matching_build_as_the_daemon_orders_it(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    # The latest release (2.0.0) does not match ^1, so lock walks the older ones: GitHub lists
    # +b1 (published later) before +b2, and only the crate's order makes +b2 the highest.
    for version in ("1.0.0+b2", "1.0.0+b1", "2.0.0"):
        publish_signed_release(github_server, private_sigstore, version)
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    wanted, lock_file, _ = _paths(tmp_path)
    wanted.write_text('[plugins.echo]\nsource = "acme/nexo-plugin-echo"\nversion = "^1"\n')
    locked = fleet_run("lock", "-f", wanted, "--trusted-keys", str(policy), env=env)
    assert locked.code == 0, locked.stderr
    text = lock_file.read_text(encoding="utf-8")
    assert 'version = "1.0.0+b2"' in text
    assert 'resolved = "acme/nexo-plugin-echo@v1.0.0+b2"' in text


def test_sync_plans_a_lower_build_as_a_downgrade(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    for version in ("1.0.0+b1", "1.0.0+b2"):
        publish_signed_release(github_server, private_sigstore, version)
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    wanted, lock_file, dest = _paths(tmp_path)
    common = ("--trusted-keys", str(policy), "--require-signature")
    wanted.write_text('[plugins.echo]\nsource = "acme/nexo-plugin-echo"\n')
    assert fleet_run("lock", "-f", wanted, *common, env=env).code == 0
    synced = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=env)
    assert synced.code == 0, synced.stderr
    assert (dest / "echo-1.0.0+b2").is_dir()

    # Pinned to the lower build: the crate orders 1.0.0+b1 below 1.0.0+b2, so it goes down.
    wanted.write_text('[plugins.echo]\nsource = "acme/nexo-plugin-echo@v1.0.0+b1"\n')
    assert fleet_run("lock", "-f", wanted, *common, env=env).code == 0
    planned = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), "--dry-run", env=env)
    assert planned.code == 0, planned.stderr
    assert planned.document["plan"] == [
        {"id": "echo", "action": "downgrade", "from_version": "1.0.0+b2", "version": "1.0.0+b1"}
    ]
