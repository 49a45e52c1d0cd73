"""The real first-party plugins, released as their repositories release them, installed from
the command line through the loopback GitHub, and a root shared with the reference installer.

Each release carries the plugin's real manifest (``daemon-parity/real-manifests``, the head of
its repository) as the release asset and in musl-only tarballs, under one of the real tag
shapes: a tag ahead of the manifest (``v0.3.1`` shipping ``google-0.3.0-*``), a release-plz
package prefix (``nexo-plugin-google-v0.2.0``) or a doubled ``vv``. The version comes from the
manifest, never from the tag; every receipt parses under the reference installer's struct.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from support.cli import CliResult, nexo, stand_in_env
from support.daemon_walk import discovered_versions
from support.receipts import reference_receipt_struct
from support.shared_fixtures import require_shared_fixture, skip_unless_present
from support.tarballs import (
    asset_name,
    directory,
    file,
    launcher_text,
    sidecar_line,
    targz,
    tree_snapshot,
)

from nexo_pkg.install.receipts import RECEIPT_NAME

from .conftest import InstallEnv

pytestmark = skip_unless_present("daemon-parity", "real-manifests")

GNU = "x86_64-unknown-linux-gnu"
MUSL_ONLY = ("x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl")

# (repository, manifest file at its head, tag shape)
FIRST_PARTY = [
    ("nexo-rs-plugin-google", "nexo-rs-plugin-google__nexo-plugin.toml__373c267e.toml", "ahead"),
    ("nexo-rs-plugin-admin", "nexo-rs-plugin-admin__plugin.toml__b5f2f698.toml", "ahead"),
    ("nexo-plugin-email", "nexo-plugin-email__nexo-plugin.toml__089a142c.toml", "release-plz"),
    ("nexo-plugin-whatsapp", "nexo-plugin-whatsapp__nexo-plugin.toml__30e0ab09.toml", "vv"),
    ("nexo-plugin-telegram", "nexo-plugin-telegram__nexo-plugin.toml__b3f444c0.toml", "ahead"),
    ("nexo-plugin-browser", "nexo-plugin-browser__nexo-plugin.toml__idx0e0f3215.toml", "vv"),
    ("nexo-rs-poller-gmail", "nexo-rs-poller-gmail__nexo-plugin.toml__9b6d319b.toml", "vv"),
    (
        "nexo-rs-poller-google-calendar",
        "nexo-rs-poller-google-calendar__nexo-plugin.toml__idxa3c277c8.toml",
        "release-plz",
    ),
    ("nexo-rs-poller-rss", "nexo-rs-poller-rss__nexo-plugin.toml__idxcaf736e8.toml", "ahead"),
]
GOOGLE = FIRST_PARTY[0]


def _manifest(file_name: str) -> str:
    return require_shared_fixture("daemon-parity", "real-manifests", file_name).read_text(
        encoding="utf-8"
    )


def _identity(text: str) -> tuple[str, str]:
    plugin = tomllib.loads(text)["plugin"]
    return plugin["id"], plugin["version"]


def _with_version(text: str, version: str) -> str:
    """The manifest with another ``[plugin] version`` (its own spacing kept)."""
    changed, count = re.subn(r'(?m)^(version\s*=\s*)"[^"]*"', rf'\g<1>"{version}"', text, count=1)
    assert count == 1
    return changed


def _tag(shape: str, plugin_id: str, version: str) -> str:
    major, minor, patch = version.split(".")
    return {
        "ahead": f"v{major}.{minor}.{int(patch) + 1}",
        "release-plz": f"nexo-plugin-{plugin_id}-v{version}",
        "vv": f"vv{version}",
    }[shape]


def _publish(env: InstallEnv, repo: str, text: str, shape: str, manifest_name: str) -> str:
    """Publish a musl-only release of ``text`` under the tag ``shape`` names; the tag."""
    plugin_id, version = _identity(text)
    members = [
        file(manifest_name, text),
        directory("bin"),
        file(f"bin/{plugin_id}", launcher_text(), mode=0o755),
    ]
    data = targz(members)
    assets: dict[str, bytes] = {manifest_name: text.encode()}
    for target in MUSL_ONLY:
        name = asset_name(plugin_id, version, target)
        assets[name] = data
        assets[name + ".sha256"] = sidecar_line(data, name).encode()
    tag = _tag(shape, plugin_id, version)
    env.server.publish("lordmacu", repo, tag, assets)
    return tag


def _manifest_name(file_name: str) -> str:
    return "plugin.toml" if "__plugin.toml__" in file_name else "nexo-plugin.toml"


def _run(env: InstallEnv, *args: str) -> CliResult:
    """``nexo plugin ARGS --dest DEST`` against the loopback GitHub on a glibc host."""
    environment = stand_in_env(env.home, env.server.url, NEXO_INSTALL_TARGET=GNU)
    return nexo("plugin", *args, "--dest", env.dest, env=environment, in_process=True)


@pytest.mark.parametrize(
    ("repo", "file_name", "shape"), FIRST_PARTY, ids=[entry[0] for entry in FIRST_PARTY]
)
def test_a_first_party_release_installs_at_its_manifest_version(
    install_env: InstallEnv, repo: str, file_name: str, shape: str
) -> None:
    text = _manifest(file_name)
    plugin_id, version = _identity(text)
    tag = _publish(install_env, repo, text, shape, _manifest_name(file_name))
    installed = _run(install_env, "install", f"lordmacu/{repo}", "--yes", "--json")
    assert installed.code == 0, installed.stdout
    document = installed.document
    assert (document["id"], document["version"]) == (plugin_id, version)
    # A musl-only matrix serves the glibc host.
    assert document["target"] == MUSL_ONLY[0]
    path = install_env.dest / f"{plugin_id}-{version}"
    assert document["path"] == str(path)
    receipt = reference_receipt_struct(json.loads((path / RECEIPT_NAME).read_text()))
    assert (receipt["version"], receipt["tag"]) == (version, "latest")
    assert json.loads((path / RECEIPT_NAME).read_text())["resolved_tag"] == tag
    assert discovered_versions(install_env.dest) == {plugin_id: version}
    # The tag itself names the same release.
    again = _run(install_env, "install", f"lordmacu/{repo}@{tag}", "--yes", "--json")
    assert (again.code, again.document["was_already_present"]) == (0, True)
    # Nothing newer: the latest release (its tag ahead of its version) is no upgrade.
    current = _run(install_env, "upgrade", plugin_id, "--yes", "--json")
    assert (current.code, current.document["upgraded"]) == (0, False)
    assert _run(install_env, "verify", plugin_id).code == 0
    assert _run(install_env, "remove", plugin_id, "--yes").code == 0
    assert discovered_versions(install_env.dest) == {}


def _reference_install(dest: Path, text: str, repo: str) -> Path:
    """A plugin directory as the reference installer leaves it after `install lordmacu/REPO`
    (the musl tarball on this host; `tag` kept as "latest"; no file hashes)."""
    plugin_id, version = _identity(text)
    directory_ = dest / f"{plugin_id}-{version}"
    (directory_ / "bin").mkdir(parents=True)
    (directory_ / "nexo-plugin.toml").write_text(text, encoding="utf-8")
    launcher = directory_ / "bin" / plugin_id
    launcher.write_text(launcher_text(), encoding="utf-8")
    launcher.chmod(0o755)
    receipt = {
        "schema_version": "1.0",
        "id": plugin_id,
        "version": version,
        "owner": "lordmacu",
        "repo": repo,
        "tag": "latest",
        "target": MUSL_ONLY[0],
        "sha256": "cd" * 32,
        "installed_at": "2026-05-07T18:20:42.123456789+00:00",
        "source": "github-releases",
    }
    (directory_ / RECEIPT_NAME).write_text(json.dumps(receipt, indent=2), encoding="utf-8")
    return directory_


def test_a_root_shared_with_the_reference_installer_follows_the_real_tag_shapes(
    install_env: InstallEnv,
) -> None:
    """The reference installed google 0.3.0 from its latest release (tag v0.3.1); nexo-pkg
    installed email (a release-plz tag) beside it. Its `upgrade` of the reference's install is
    a no-op while the latest release still carries 0.3.0, and a move to 0.4.0 (tag v0.4.1)
    once it does not; the receipt keeps following `latest`, so the reference's own `upgrade`
    does too; one manifest per id is discoverable at every step."""
    repo, file_name, _shape = GOOGLE
    google = _manifest(file_name)
    _publish(install_env, repo, google, "ahead", "nexo-plugin.toml")
    theirs = _reference_install(install_env.dest, google, repo)
    email_repo, email_file, email_shape = FIRST_PARTY[2]
    _publish(install_env, email_repo, _manifest(email_file), email_shape, "nexo-plugin.toml")
    assert _run(install_env, "install", f"lordmacu/{email_repo}", "--yes").code == 0
    both = {"google": "0.3.0", "email": _identity(_manifest(email_file))[1]}
    assert discovered_versions(install_env.dest) == both

    listing = _run(install_env, "list", "--json")
    assert listing.code == 0
    rows = {(p["id"], p["version"], p["tag"], p["path"]) for p in listing.document["plugins"]}
    assert ("google", "0.3.0", "latest", str(theirs)) in rows
    assert {row[0] for row in rows} == {"google", "email"}

    before = tree_snapshot(install_env.dest)
    for args in (("upgrade", "google"), ("upgrade", "--all")):
        unchanged = _run(install_env, *args, "--yes", "--json")
        assert unchanged.code == 0, unchanged.stdout
        assert tree_snapshot(install_env.dest) == before
    assert _run(install_env, "outdated", "--json").document["outdated"] is False

    _publish(install_env, repo, _with_version(google, "0.4.0"), "ahead", "nexo-plugin.toml")
    moved = _run(install_env, "upgrade", "--all", "--yes", "--json")
    assert moved.code == 0, moved.stdout
    assert not theirs.exists()
    assert discovered_versions(install_env.dest) == {**both, "google": "0.4.0"}
    receipt = json.loads((install_env.dest / "google-0.4.0" / RECEIPT_NAME).read_text())
    assert reference_receipt_struct(receipt)["tag"] == "latest"
    assert (receipt["version"], receipt["resolved_tag"]) == ("0.4.0", "v0.4.1")

    for plugin_id in ("google", "email"):
        assert _run(install_env, "remove", plugin_id, "--yes").code == 0
    assert discovered_versions(install_env.dest) == {}


def _previous_release(repo: str, head: str) -> str | None:
    """The file of the highest earlier version of ``repo``'s manifest than its head's."""
    folder = require_shared_fixture("daemon-parity", "real-manifests")
    head_version = _version_key(_identity(_manifest(head))[1])
    best: tuple[tuple[int, ...], str] | None = None
    for candidate in sorted(folder.glob(f"{repo}__*__hist.toml")):
        if _manifest_name(candidate.name) != _manifest_name(head):
            continue
        key = _version_key(_identity(candidate.read_text(encoding="utf-8"))[1])
        if key < head_version and (best is None or key > best[0]):
            best = (key, candidate.name)
    return None if best is None else best[1]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


# The repositories whose earlier manifests are among the fixtures.
WITH_HISTORY = FIRST_PARTY[:5]


@pytest.mark.parametrize(
    ("repo", "file_name", "shape"), WITH_HISTORY, ids=[entry[0] for entry in WITH_HISTORY]
)
def test_an_earlier_real_release_upgrades_to_the_head(
    install_env: InstallEnv, repo: str, file_name: str, shape: str
) -> None:
    """The repository's previous real manifest, released under its tag shape and installed,
    then its head released: `upgrade` moves to the head's version, exactly one manifest of the
    id stays discoverable, and the replaced version is kept out of the daemon's sight."""
    previous = _previous_release(repo, file_name)
    assert previous is not None
    name = _manifest_name(file_name)
    old_text = _manifest(previous)
    plugin_id, old_version = _identity(old_text)
    _publish(install_env, repo, old_text, shape, name)
    assert _run(install_env, "install", f"lordmacu/{repo}", "--yes").code == 0
    assert discovered_versions(install_env.dest) == {plugin_id: old_version}

    head = _manifest(file_name)
    new_version = _identity(head)[1]
    tag = _publish(install_env, repo, head, shape, name)
    moved = _run(install_env, "upgrade", plugin_id, "--yes", "--json")
    assert moved.code == 0, moved.stdout
    assert (moved.document["upgraded"], moved.document["version"]) == (True, new_version)
    assert discovered_versions(install_env.dest) == {plugin_id: new_version}
    receipt = json.loads(
        (install_env.dest / f"{plugin_id}-{new_version}" / RECEIPT_NAME).read_text()
    )
    assert (reference_receipt_struct(receipt)["version"], receipt["resolved_tag"]) == (
        new_version,
        tag,
    )
    listing = _run(install_env, "list", "--json")
    versions = {(p["id"], p["version"], bool(p.get("kept"))) for p in listing.document["plugins"]}
    assert versions == {(plugin_id, new_version, False), (plugin_id, old_version, True)}
    assert _run(install_env, "verify", plugin_id).code == 0


# The targets the first-party release workflows build (x86_64/aarch64 musl, macOS, Windows).
WORKFLOW_TARGETS = (
    *MUSL_ONLY,
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
)


def _workflow_release(work: Path, text: str) -> dict[str, bytes]:
    """The assets of a release as the first-party workflows build it (release.yml of
    nexo-rs-plugin-google and nexo-rs-plugin-admin): per target, ``tar czf T -C staging
    bin/<id> nexo-plugin.toml`` by the real ``tar`` (no directory entries; admin ships its
    ``plugin.toml`` under this name), a ``.sha256`` of bare hex from ``sha256sum | awk``, and
    the manifest as the ``nexo-plugin.toml`` asset."""
    plugin_id, version = _identity(text)
    staging = work / f"{plugin_id}-{version}"
    (staging / "bin").mkdir(parents=True)
    (staging / "nexo-plugin.toml").write_text(text, encoding="utf-8")
    launcher = staging / "bin" / plugin_id
    launcher.write_text(launcher_text(), encoding="utf-8")
    launcher.chmod(0o755)
    tar = shutil.which("tar")
    assert tar is not None
    assets: dict[str, bytes] = {"nexo-plugin.toml": text.encode()}
    for target in WORKFLOW_TARGETS:
        name = asset_name(plugin_id, version, target)
        subprocess.run(
            [tar, "czf", str(work / name), "-C", str(staging), f"bin/{plugin_id}",
             "nexo-plugin.toml"],
            check=True,
        )  # fmt: skip
        data = (work / name).read_bytes()
        assets[name] = data
        assets[name + ".sha256"] = (hashlib.sha256(data).hexdigest() + "\n").encode()
    return assets


def _real_history(repo: str) -> list[str]:
    """Every real manifest of ``repo`` (head and earlier), one per version, oldest first;
    of several with one version, the head's (else the first by name)."""
    folder = require_shared_fixture("daemon-parity", "real-manifests")
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    chosen: dict[tuple[int, ...], tuple[bool, str]] = {}
    for entry in sorted(index, key=lambda entry: entry["file"]):
        if entry["repo"] != f"lordmacu/{repo}":
            continue
        key = _version_key(_identity(_manifest(entry["file"]))[1])
        if key not in chosen or (entry["at_head"] and not chosen[key][0]):
            chosen[key] = (entry["at_head"], entry["file"])
    return [chosen[key][1] for key in sorted(chosen)]


@pytest.mark.skipif(shutil.which("tar") is None, reason="needs the tar program")
@pytest.mark.parametrize(
    ("repo", "file_name", "shape"), WITH_HISTORY, ids=[entry[0] for entry in WITH_HISTORY]
)
def test_every_real_release_in_turn_installs_and_upgrades_as_the_workflow_builds_it(
    install_env: InstallEnv, tmp_path: Path, repo: str, file_name: str, shape: str
) -> None:
    """Each real version of the repository's manifest, oldest first, released as its
    workflow builds releases and under its tag shape: the oldest installs, each later one is
    an `upgrade` to it; at every step exactly that version is discoverable, `verify` passes
    and the receipt parses under the reference installer's struct; at the end `list` shows
    the head and the one version kept out of the daemon's sight."""
    history = _real_history(repo)
    assert history[-1] == file_name
    assert len(history) >= 3
    plugin_id = _identity(_manifest(file_name))[0]
    versions: list[str] = []
    for step, name in enumerate(history):
        text = _manifest(name)
        version = _identity(text)[1]
        tag = _tag(shape, plugin_id, version)
        assets = _workflow_release(tmp_path / str(step), text)
        install_env.server.publish("lordmacu", repo, tag, assets)
        if not versions:
            done = _run(install_env, "install", f"lordmacu/{repo}", "--yes", "--json")
        else:
            done = _run(install_env, "upgrade", plugin_id, "--yes", "--json")
            assert (done.document["upgraded"], done.document["from_version"]) == (
                True,
                versions[-1],
            ), done.stdout
        assert done.code == 0, (name, done.stdout)
        assert (done.document["version"], done.document["target"]) == (version, MUSL_ONLY[0])
        versions.append(version)
        assert discovered_versions(install_env.dest) == {plugin_id: version}, name
        receipt = json.loads(
            (install_env.dest / f"{plugin_id}-{version}" / RECEIPT_NAME).read_text()
        )
        assert reference_receipt_struct(receipt)["version"] == version
        assert (receipt["tag"], receipt["resolved_tag"]) == ("latest", tag)
        assert _run(install_env, "verify", plugin_id).code == 0, name
    listing = _run(install_env, "list", "--json").document["plugins"]
    assert {(p["id"], p["version"], bool(p.get("kept"))) for p in listing} == {
        (plugin_id, versions[-1], False),
        (plugin_id, versions[-2], True),
    }
