"""A fleet moved to its next lock several plugins at a time, one of whose new versions is
refused for its signature: that plugin stays whole at the version it had (its files, its
receipt, nothing kept for rollback, nothing staged), while the others are replaced and keep
theirs for ``rollback``."""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.registry import Registry
from support.registry_env import ACME_IDENTITY, LINUX, MakeDist, push_dist
from support.tarballs import tree_snapshot

PLUGINS = ("alpha", "bravo", "charlie")


def _lock(directory: Path, registry: Registry, version: str, env: dict[str, str]) -> Path:
    """Lock every plugin at ``version``, recording no signer (the lock's host verifies
    nothing): the syncing host's policy alone judges the signatures."""
    directory.mkdir()
    (directory / "nexo-plugins.toml").write_text(
        "".join(
            f'[plugins.{p}]\nsource = "{registry.ref(f"plugins/{p}")}"\nversion = "={version}"\n\n'
            for p in PLUGINS
        ),
        encoding="utf-8",
    )
    locked = nexo("plugin", "lock", "-f", str(directory / "nexo-plugins.toml"), "--plain-http",
                  "--skip-signature-verify", env=env, in_process=True)  # fmt: skip
    assert locked.code == 0, locked.stderr
    return directory / "nexo-plugins.lock"


def test_a_refused_signature_leaves_that_plugin_whole_at_its_old_version(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    private_sigstore: PrivateSigstore,
    policy: Path,
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    for plugin_id in PLUGINS:
        push_dist(
            make_dist(plugin_id, "1.0.0", targets=(LINUX,)),
            registry.ref(f"plugins/{plugin_id}"),
            home,
        )
        dist = make_dist(plugin_id, "2.0.0", targets=(LINUX,))
        if plugin_id == "bravo":
            # A genuine bundle of a trusted signer, for other bytes than bravo's tarball.
            signed = private_sigstore.sign(b"other bytes", identity=ACME_IDENTITY)
            bundle = dist / f"bravo-2.0.0-{LINUX}.tar.gz.sigstore.json"
            bundle.write_text(json.dumps(signed), encoding="utf-8")
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), home)
    old = _lock(tmp_path / "old", registry, "1.0.0", fleet_env)
    new = _lock(tmp_path / "new", registry, "2.0.0", fleet_env)
    dest = tmp_path / "root"
    common = ("--dest", str(dest), "--frozen", "--plain-http", "--trusted-keys", str(policy),
              "--require-signature", "--json")  # fmt: skip
    first = nexo("plugin", "sync", "--lock", str(old), *common, env=fleet_env)
    assert first.code == 0, first.stdout
    before = tree_snapshot(dest / "bravo-1.0.0")

    # The default jobs: the three plugins go at once.
    moved = nexo("plugin", "sync", "--lock", str(new), *common, env=fleet_env)
    assert moved.code == 1, moved.stdout
    document = json.loads(moved.stdout)
    assert (document["kind"], document["error"]) == ("sync_failed", "1 plugin(s) failed: bravo")
    outcomes = {item["id"]: item for item in document["plugins"]}
    bravo = outcomes.pop("bravo")
    assert (bravo["action"], bravo["kind"]) == ("failed", "signature_invalid")
    assert (bravo["from_version"], bravo["version"]) == ("1.0.0", "2.0.0")
    assert "kept_paths" not in bravo
    for plugin_id, item in outcomes.items():
        assert (item["action"], item["from_version"]) == ("replaced", "1.0.0"), plugin_id
        assert len(item["kept_paths"]) == 1, plugin_id
    assert sorted(path.name for path in dest.iterdir() if not path.name.startswith(".")) == [
        "alpha-2.0.0", "bravo-1.0.0", "charlie-2.0.0",
    ]  # fmt: skip
    assert tree_snapshot(dest / "bravo-1.0.0") == before
    receipt = json.loads((dest / "bravo-1.0.0" / ".nexo-install.json").read_text())
    assert (receipt["version"], receipt["signature"]["status"]) == ("1.0.0", "verified")
    # Out of the daemon's sight: only the replaced versions, kept; nothing staged.
    assert sorted(path.name.split("-1.0.0-")[0] for path in (dest / ".nexo").iterdir()) == ["kept"]
    kept = sorted(path.name.split("-1.0.0-")[0] for path in (dest / ".nexo" / "kept").iterdir())
    assert kept == ["alpha", "charlie"]
    verified = nexo("plugin", "verify", "--dest", str(dest), "--json", env=fleet_env)
    assert verified.code == 0, verified.stdout
