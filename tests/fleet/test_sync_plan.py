"""``sync`` says what it will do and keeps what it replaces: ``--dry-run`` prints the plan per
plugin (install, upgrade, downgrade, reinstall, remove, unchanged, with versions) without a
request or a write, the summary of a run names every downgrade "as locked", and the version
a sync replaced is kept for ``rollback`` as ``upgrade`` keeps it."""

from __future__ import annotations

from pathlib import Path

from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.private_sigstore import PrivateSigstore
from support.registry import Registry
from support.registry_env import publish_signed_release
from support.tarballs import release_assets, tree_snapshot

from .conftest import MakeDist, fleet_run

__all__ = ["github_server"]


def _want(wanted: Path, **sources: str) -> None:
    wanted.write_text(
        "".join(f'[plugins.{name}]\nsource = "{source}"\n\n' for name, source in sources.items())
    )


def test_sync_plans_downgrades_as_locked_and_keeps_what_it_replaces(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    for version in ("1.2.3", "1.3.0"):
        publish_signed_release(github_server, private_sigstore, version)
    publish_signed_release(github_server, private_sigstore, "1.0.0", "other")
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    wanted, lock_file, dest = (
        tmp_path / "nexo-plugins.toml",
        tmp_path / "nexo-plugins.lock",
        tmp_path / "root",
    )
    common = ("--trusted-keys", str(policy), "--require-signature")
    _want(wanted, echo="acme/nexo-plugin-echo", other="acme/nexo-plugin-other")
    # No lock yet: a run would resolve the wanted set first; a dry run says so, resolves nothing.
    github_server.requests.clear()
    unlocked = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), "--dry-run", env=env)
    assert (unlocked.code, unlocked.document["kind"]) == (1, "lock_stale")
    assert (github_server.requests, lock_file.exists(), dest.exists()) == ([], False, False)
    assert fleet_run("lock", "-f", wanted, *common, env=env).code == 0

    # Nothing installed: the plan installs both, and a dry run asks nothing of anyone.
    github_server.requests.clear()
    planned = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), "--dry-run", env=env)
    assert planned.code == 0, planned.stderr
    assert planned.document["dry_run"] is True
    assert planned.document["plan"] == [
        {"id": "echo", "action": "install", "from_version": None, "version": "1.3.0"},
        {"id": "other", "action": "install", "from_version": None, "version": "1.0.0"},
    ]
    assert github_server.requests == []
    assert not dest.exists()
    assert fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=env).code == 0

    # The wanted set now pins echo's older release and drops other: a downgrade, a removal.
    _want(wanted, echo="acme/nexo-plugin-echo@v1.2.3")
    assert fleet_run("lock", "-f", wanted, *common, env=env).code == 0
    before = tree_snapshot(dest)
    github_server.requests.clear()
    planned = fleet_run(
        "sync", "--lock", lock_file, "--dest", str(dest), "--prune", "--dry-run", env=env
    )
    assert planned.code == 0, planned.stderr
    assert planned.document["plan"] == [
        {"id": "echo", "action": "downgrade", "from_version": "1.3.0", "version": "1.2.3"},
        {"id": "other", "action": "remove", "from_version": "1.0.0", "version": None},
    ]
    assert planned.document["stale"] == []
    text = nexo(
        "plugin", "sync", "--lock", str(lock_file), "--dest", str(dest), "--prune", "--dry-run",
        env=env, in_process=True,
    )  # fmt: skip
    assert text.code == 0, text.stderr
    assert text.stdout.splitlines()[0].split() == [
        "echo", "1.3.0", "\u2192", "1.2.3", "downgrade", "(as", "locked)",
    ]  # fmt: skip
    assert text.stdout.splitlines()[1].split()[:3] == ["other", "1.0.0", "remove"]
    assert "Dry run: 2 change(s) planned" in text.stderr
    # The summary names the downgrade, as the run's own summary does.
    assert "would downgrade as locked: echo 1.3.0 \u2192 1.2.3;" in text.stderr
    assert (github_server.requests, tree_snapshot(dest)) == ([], before)

    # The run says the downgrade, and keeps 1.3.0 for rollback as upgrade would.
    synced = nexo(
        "plugin", "sync", "--lock", str(lock_file), "--dest", str(dest), "--prune", *common,
        env=env, in_process=True,
    )  # fmt: skip
    assert synced.code == 0, synced.stderr
    assert "echo 1.3.0 \u2192 1.2.3: downgraded (as locked); 1.3.0 kept for rollback" in (
        synced.stderr
    )
    assert "downgraded as locked: echo 1.3.0 \u2192 1.2.3." in synced.stderr
    listing = nexo("plugin", "list", "--dest", str(dest), "--json", env=env, in_process=True)
    versions = sorted((p["id"], p["version"], p["kept"]) for p in listing.document["plugins"])
    assert versions == [("echo", "1.2.3", False), ("echo", "1.3.0", True)]
    rolled = nexo(
        "plugin", "rollback", "echo", "--dest", str(dest), "--json", env=env, in_process=True
    )
    assert rolled.code == 0, rolled.stderr
    assert (rolled.document["from_version"], rolled.document["version"]) == ("1.2.3", "1.3.0")

    # In line with the lock again: the plan is a downgrade once more; the JSON run says so.
    replayed = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), *common, env=env)
    assert replayed.code == 0, replayed.stderr
    (echo,) = replayed.document["plugins"]
    assert (echo["change"], echo["from_version"], echo["version"]) == (
        "downgrade",
        "1.3.0",
        "1.2.3",
    )
    assert len(echo["kept_paths"]) == 1
    # The lock named the version: the rollback's hold is over.
    listing = nexo("plugin", "list", "--dest", str(dest), "--json", env=env, in_process=True)
    assert [p["held"] for p in listing.document["plugins"] if not p["kept"]] == [False]
    again = fleet_run("sync", "--lock", lock_file, "--dest", str(dest), "--dry-run", env=env)
    assert again.document["plan"] == [
        {"id": "echo", "action": "unchanged", "from_version": "1.2.3", "version": "1.2.3"}
    ]


def test_lock_takes_the_newest_matching_release_and_warns_on_unsigned_ones(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    """``version = "^0.1"`` when the latest release is 0.2.0: the newest 0.1.x is locked (as
    cargo and uv), found by walking releases as ``install`` does for min_nexo_version; an
    unsigned artifact is warned about as ``install`` warns, ``-q`` or not."""
    for version in ("0.1.0", "0.1.1", "0.2.0"):
        publish_signed_release(github_server, private_sigstore, version)
    github_server.publish("acme", "nexo-plugin-other", "v1.0.0", release_assets("other", "1.0.0"))
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    wanted, lock_file = tmp_path / "nexo-plugins.toml", tmp_path / "nexo-plugins.lock"
    wanted.write_text(
        '[plugins.echo]\nsource = "acme/nexo-plugin-echo"\nversion = "^0.1"\n\n'
        '[plugins.other]\nsource = "acme/nexo-plugin-other"\n'
    )
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--trusted-keys", str(policy),
        env=env, in_process=True,
    )  # fmt: skip
    assert locked.code == 0, locked.stderr
    text = lock_file.read_text()
    assert 'resolved = "acme/nexo-plugin-echo@v0.1.1"' in text
    assert "locking v0.1.1, the newest release that does" in locked.stderr
    (warning,) = [line for line in locked.stderr.splitlines() if "NOT SIGNED" in line]
    assert warning.startswith("WARNING: other-1.0.0-")
    # A lock installs nothing: it says what it does with the unsigned tarball.
    assert "NOT SIGNED; locking it unverified" in warning
    assert "installing" not in warning
    # The document says it too; -q keeps the warning.
    lock_file.unlink()
    quiet = fleet_run("lock", "-f", wanted, "-q", "--trusted-keys", str(policy), env=env)
    assert quiet.code == 0, quiet.stderr
    assert [w for w in quiet.document["warnings"] if "NOT SIGNED" in w] == [warning.split("\n")[0]]
    assert "NOT SIGNED" in quiet.stderr
    # Nothing matches: the error says the releases before the latest were looked at too.
    wanted.write_text('[plugins.echo]\nsource = "acme/nexo-plugin-echo"\nversion = "^0.3"\n')
    refused = fleet_run("lock", "-f", wanted, "--trusted-keys", str(policy), env=env)
    assert (refused.code, refused.document["kind"]) == (1, "release_not_found")
    assert "nor does any release before it (up to 20 looked at)" in refused.document["error"]


def test_push_takes_dist_from_where_pack_writes(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    dist = make_dist()
    project = tmp_path / "project"
    project.mkdir()
    dist.rename(project / "dist")
    pushed = nexo(
        "plugin", "push", registry.ref("plugins/echo"), "--plain-http", "--json",
        env=fleet_env, cwd=project, in_process=True,
    )  # fmt: skip
    assert pushed.code == 0, pushed.stderr
    assert pushed.document["version"] == "1.2.3"
    three = nexo(
        "plugin", "push", "dist", "again", registry.ref("plugins/echo"), "--json",
        env=fleet_env, cwd=project, in_process=True,
    )  # fmt: skip
    assert (three.code, three.document["kind"]) == (2, "usage")


def test_a_registry_answering_https_with_plain_http_says_use_plain_http(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    """The loopback registry speaks plain http: asked over https, the answer names the flag,
    at once (not after every retry), and nothing is installed."""
    refused = nexo(
        "plugin", "install", registry.ref("plugins/echo:1.2.3"), "--dest", str(tmp_path / "root"),
        "--yes", "--json", env=fleet_env, in_process=True,
    )  # fmt: skip
    assert (refused.code, refused.document["kind"]) == (1, "network")
    assert "answered https with plain http" in refused.document["error"]
    assert "--plain-http" in refused.document["error"]
    assert not (tmp_path / "root").exists()
