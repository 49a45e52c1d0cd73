"""Compatibility with the daemon for ``oci://`` sources, against the real registry.

Without a tag, ``install`` takes the newest version whose plugin manifest (the annotation
``push`` copies into each target's manifest) admits the daemon, and ``upgrade`` of a registry
install moves to the newest such version above the installed one: chosen from tags, indexes
and target manifests, with no tarball of a passed-over version fetched.
"""

from __future__ import annotations

import json
from pathlib import Path

from support.cli import nexo
from support.registry import Registry
from support.tarballs import manifest_text, plugin_tarball, tree_snapshot, write_plugin

from .conftest import LINUX, fleet_run, push_dist

BLOB_GET = r"/blobs/sha256:[0-9a-f]{64}$"


def _push(
    registry: Registry, home: Path, tmp_path: Path, version: str, needs: str, *, tag: str = ""
) -> None:
    """Push hello ``version`` (noarch and linux, unsigned) needing a daemon matching ``needs``
    (under ``tag``, else the version's own)."""
    text = manifest_text("hello", version).replace(">=0.1.0", needs)
    dist = tmp_path / f"dist-{version}"
    for target in ("noarch", LINUX):
        data = plugin_tarball("hello", version, manifest=text, payload=target.encode())
        write_plugin(dist, "hello", version, target=target, data=data)
    (dist / "nexo-plugin.toml").write_text(text)
    push_dist(dist, registry.ref("plugins/hello" + (f":{tag}" if tag else "")), home)


def _common(tmp_path: Path) -> tuple[str, ...]:
    return ("--dest", str(tmp_path / "plugins"), "--plain-http", "--yes", "--json")


def _tarball_gets(registry: Registry) -> int:
    """Blob reads other than the small config blobs: each is a tarball layer."""
    return registry.requests("GET", BLOB_GET)


def test_without_a_tag_the_newest_compatible_version_is_installed(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    _push(registry, home, tmp_path, "1.0.0", ">=0.1.0")
    _push(registry, home, tmp_path, "1.1.0", ">=0.2.0")
    _push(registry, home, tmp_path, "1.2.0", ">=0.3.0")
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")
    before = _tarball_gets(registry)
    source = registry.ref("plugins/hello")
    installed = nexo("plugin", "install", source, "--nexo-version", "0.2.1", *_common(tmp_path),
                     env=fleet_env, in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    assert (installed.document["id"], installed.document["version"]) == ("hello", "1.1.0")
    assert "installing 1.1.0, the newest version compatible with it" in installed.stderr
    # One tarball read: the chosen version's (passed-over versions cost a manifest each).
    assert _tarball_gets(registry) - before == 1
    names = sorted(p.name for p in (tmp_path / "plugins").iterdir() if not p.name.startswith("."))
    assert names == ["hello-1.1.0"]


def test_nothing_compatible_refuses_the_newest_and_force_installs_it(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    _push(registry, home, tmp_path, "1.0.0", ">=5.0")
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")
    source = registry.ref("plugins/hello")
    refused = nexo("plugin", "install", source, "--nexo-version", "0.2.1", *_common(tmp_path),
                   env=fleet_env, in_process=True)  # fmt: skip
    assert refused.code == 1
    assert (refused.document["kind"], refused.document["min_nexo_version"]) == (
        "incompatible",
        ">=9.0",
    )
    assert tree_snapshot(tmp_path / "plugins") == {}
    forced = nexo("plugin", "install", source, "--nexo-version", "0.2.1", "--force",
                  *_common(tmp_path), env=fleet_env, in_process=True)  # fmt: skip
    assert forced.code == 0, forced.stderr
    assert forced.document["version"] == "2.0.0"


def test_an_explicit_tag_is_not_replaced(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    _push(registry, home, tmp_path, "1.0.0", ">=0.1.0")
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")
    before = _tarball_gets(registry)
    refused = nexo("plugin", "install", registry.ref("plugins/hello") + ":2.0.0", "--nexo-version",
                   "0.2.1", *_common(tmp_path), env=fleet_env, in_process=True)  # fmt: skip
    assert refused.code == 1
    assert refused.document["kind"] == "incompatible"
    assert tree_snapshot(tmp_path / "plugins") == {}
    assert _tarball_gets(registry) - before <= 1


def test_upgrade_moves_to_the_newest_version_the_daemon_admits(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    """Installed 1.0.0; 2.0.0 needs daemon 9, 1.2.0 needs 0.3, 1.1.0 admits 0.2.1: the upgrade
    goes to 1.1.0. When only the installed version and older ones admit the daemon, the newest
    is refused as incompatible (never a downgrade), the installed tree untouched."""
    home = Path(fleet_env["NEXO_HOME"])
    _push(registry, home, tmp_path, "1.0.0", ">=0.1.0")
    source = registry.ref("plugins/hello")
    installed = nexo("plugin", "install", source + ":1.0.0", *_common(tmp_path), env=fleet_env,
                     in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    _push(registry, home, tmp_path, "1.1.0", ">=0.2.0")
    _push(registry, home, tmp_path, "1.2.0", ">=0.3.0")
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")
    before = _tarball_gets(registry)
    upgraded = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", *_common(tmp_path),
                    env=fleet_env, in_process=True)  # fmt: skip
    assert upgraded.code == 0, upgraded.stderr
    assert (upgraded.document["from_version"], upgraded.document["version"]) == ("1.0.0", "1.1.0")
    assert "upgrading to 1.1.0, the newest version compatible with it" in upgraded.stderr
    assert _tarball_gets(registry) - before == 1

    plugins = tmp_path / "plugins"
    before_tree = tree_snapshot(plugins)
    again = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", *_common(tmp_path),
                 env=fleet_env, in_process=True)  # fmt: skip
    assert again.code == 1
    assert (again.document["kind"], again.document["min_nexo_version"]) == ("incompatible", ">=9.0")
    assert tree_snapshot(plugins) == before_tree
    receipt = json.loads((plugins / "hello-1.1.0" / ".nexo-install.json").read_text())
    assert receipt["version"] == "1.1.0"


def test_lock_chooses_the_newest_version_the_daemon_admits(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    """``lock --nexo-version`` of a tagless registry source locks the newest version whose
    manifest admits the daemon, reading no tarball of the newer ones; a tag that excludes it
    is ``incompatible`` and no lock is written."""
    home = Path(fleet_env["NEXO_HOME"])
    _push(registry, home, tmp_path, "1.0.0", ">=0.1.0")
    _push(registry, home, tmp_path, "1.1.0", ">=0.2.0")
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")
    source = registry.ref("plugins/hello")
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    wanted = fleet / "nexo-plugins.toml"
    lock_file = fleet / "nexo-plugins.lock"

    wanted.write_text(f'[plugins.hello]\nsource = "{source}:2.0.0"\n', encoding="utf-8")
    refused = fleet_run(
        "lock", "-f", wanted, "--plain-http", "--nexo-version", "0.2.1", env=fleet_env
    )
    assert refused.code == 1, refused.stderr
    assert (refused.document["kind"], refused.document["min_nexo_version"]) == (
        "incompatible",
        ">=9.0",
    )
    assert "lock a version it admits" in refused.document["error"]
    assert not lock_file.exists()

    wanted.write_text(f'[plugins.hello]\nsource = "{source}"\n', encoding="utf-8")
    locked = fleet_run(
        "lock", "-f", wanted, "--plain-http", "--nexo-version", "0.2.1", env=fleet_env
    )
    assert locked.code == 0, locked.stderr
    assert "locking 1.1.0, the newest version compatible with it" in locked.stderr
    text = lock_file.read_text(encoding="utf-8")
    assert 'version = "1.1.0"' in text
    assert "2.0.0" not in text


def test_builds_of_one_version_are_ordered_as_the_daemon_orders_them(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    """Builds of one version are distinct versions in the daemon's order (the Rust `semver`
    crate's `impl Ord for BuildMetadata`, dtolnay/semver src/impls.rs: numeric identifiers by
    value, so build.1 < build.2 < build.10): when the newest build excludes the daemon, an
    older build of the same version that admits it is installed, and an upgrade moves to a
    newer build above the installed one, as for releases."""
    home = Path(fleet_env["NEXO_HOME"])
    # A tag names a build with `_` (Helm's and ORAS's spelling: `+` is no tag character).
    _push(registry, home, tmp_path, "1.0.0+build.1", ">=0.1.0", tag="1.0.0_build.1")
    _push(registry, home, tmp_path, "1.0.0+build.2", ">=0.2.0", tag="1.0.0_build.2")
    _push(registry, home, tmp_path, "1.0.0+build.10", ">=9.0", tag="1.0.0_build.10")
    source = registry.ref("plugins/hello")

    def run(*args: str) -> dict[str, object]:
        done = nexo("plugin", *args, *_common(tmp_path), env=fleet_env, in_process=True)
        assert done.code == 0, done.stderr
        return done.document

    installed = run("install", source, "--nexo-version", "0.1.5")
    assert installed["version"] == "1.0.0+build.1"
    upgraded = run("upgrade", "hello", "--nexo-version", "0.2.1")
    assert (upgraded["from_version"], upgraded["version"]) == ("1.0.0+build.1", "1.0.0+build.2")
    again = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", *_common(tmp_path),
                 env=fleet_env, in_process=True)  # fmt: skip
    assert (again.code, again.document["kind"]) == (1, "incompatible")  # none newer admits it
    fresh = nexo("plugin", "install", source, "--nexo-version", "0.2.1", "--dest",
                 str(tmp_path / "fresh"), "--plain-http", "--yes", "--json",
                 env=fleet_env, in_process=True)  # fmt: skip
    assert fresh.code == 0, fresh.stderr
    assert fresh.document["version"] == "1.0.0+build.2"


def test_outdated_says_the_newest_version_needs_a_newer_daemon(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry
) -> None:
    """A registry install whose newest version excludes the daemon: `outdated` reads its
    manifest annotation (no tarball) and reports it as needing a newer daemon, not outdated."""
    home = Path(fleet_env["NEXO_HOME"])
    _push(registry, home, tmp_path, "1.0.0", ">=0.1.0")
    source = registry.ref("plugins/hello")
    installed = nexo("plugin", "install", source, *_common(tmp_path), env=fleet_env,
                     in_process=True)  # fmt: skip
    assert installed.code == 0, installed.stderr
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")
    before = _tarball_gets(registry)
    dest = ("--dest", str(tmp_path / "plugins"), "--plain-http", "--json")
    found = nexo("plugin", "outdated", "--nexo-version", "0.2.1", "--exit-code", *dest,
                 env=fleet_env)  # fmt: skip
    assert found.code == 0, found.stderr
    (entry,) = found.document["plugins"]
    assert (entry["status"], entry["latest"], entry["outdated"]) == ("incompatible", "2.0.0", False)
    assert (entry["min_nexo_version"], entry["nexo_version"]) == (">=9.0", "0.2.1")
    assert _tarball_gets(registry) == before
    admitted = nexo("plugin", "outdated", "--nexo-version", "9.1.0", "--exit-code", *dest,
                    env=fleet_env)  # fmt: skip
    assert (admitted.code, admitted.document["plugins"][0]["status"]) == (1, "outdated")
