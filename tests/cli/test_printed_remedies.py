"""Every command a refusal or a report prints works when run as printed: the test provokes the
message through the real command line, copies the ``nexo plugin …`` command between its
backticks, runs it (``--yes``: no terminal), and the first command then passes. Plugins come
from the loopback GitHub stand-in, as real release tarballs, into a root named with
``--dest`` (the printed command must name it) or the default one (it must not)."""

from __future__ import annotations

import json
import re
import shlex
from functools import partial
from pathlib import Path

import pytest
from support import cli
from support.cli import CliResult
from support.github_server import GitHubServer
from support.tarballs import (
    file,
    plugin_members,
    release_assets,
    targz,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.install.receipts import REFERENCE_RECEIPT_FIELDS

nexo = partial(cli.nexo, in_process=True)
COMMAND = re.compile(r"`(nexo plugin [^`]*)`")


@pytest.fixture
def env(github_env: dict[str, str], server: GitHubServer) -> dict[str, str]:
    """An isolated NEXO_HOME pointing at the loopback GitHub, with hello 1.0.0 and 1.1.0."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    return github_env


def _printed(result: CliResult, verb: str) -> list[str]:
    """The words of the one ``nexo plugin VERB …`` command ``result`` printed on stderr."""
    found = [c for c in COMMAND.findall(result.stderr + result.stdout) if c.split()[2] == verb]
    assert len(found) == 1, (verb, result.stderr, result.stdout)
    return shlex.split(found[0])


def _run(words: list[str], env: dict[str, str], cwd: Path, *extra: str) -> CliResult:
    assert words[:2] == ["nexo", "plugin"], words
    result = nexo(*words[1:], *extra, "--yes", env=env, cwd=cwd)
    assert result.code == 0, result.stderr
    return result


def _installed(root: Path) -> Path:
    (path,) = [p for p in root.iterdir() if p.name.startswith("hello")]
    return path


@pytest.mark.parametrize("elsewhere", [True, False], ids=["dest", "default-root"])
def test_a_changed_plugin_gets_a_reinstall_naming_its_release_and_root(
    tmp_path: Path, env: dict[str, str], elsewhere: bool
) -> None:
    """`sbom` refuses a plugin whose files changed: the reinstall it prints names the release
    (a bare `install --force` is a usage error: no SOURCE) and, only when it is not the
    default, the root; run as printed, the same `sbom` then passes."""
    root = tmp_path / "roots" / "a" if elsewhere else tmp_path / "home" / "state" / "plugins"
    where = ("--dest", str(root)) if elsewhere else ()
    assert nexo("plugin", "install", "acme/hello@v1.0.0", "--yes", *where, env=env).code == 0
    (_installed(root) / "bin" / "hello").write_text("changed\n", encoding="utf-8")
    refused = nexo("plugin", "sbom", "hello", *where, "--json", env=env, cwd=tmp_path)
    assert refused.code == 1
    assert refused.document["kind"] == "verify_failed"
    words = shlex.split(COMMAND.findall(refused.document["error"])[-1])
    assert words[:5] == ["nexo", "plugin", "install", "acme/hello@v1.0.0", "--force"]
    assert ("--dest" in words) is elsewhere
    _run(words, env, tmp_path)
    described = nexo("plugin", "sbom", "hello", *where, "--json", env=env, cwd=tmp_path)
    assert described.code == 0, described.stderr
    assert described.document["metadata"]["component"]["version"] == "1.0.0"


def test_a_receipt_without_hashes_gets_a_reinstall_that_records_them(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A receipt the reference installer wrote (its ten fields, no hashes): `verify` says to
    reinstall; the command it prints (the latest release, as the receipt followed it)
    writes a receipt with hashes, and `verify` passes."""
    root = tmp_path / "plugins"
    assert nexo("plugin", "install", "acme/hello", "--yes", "--dest", root, env=env).code == 0
    receipt = _installed(root) / ".nexo-install.json"
    document = json.loads(receipt.read_text(encoding="utf-8"))
    reference = {field: document[field] for field in REFERENCE_RECEIPT_FIELDS}
    receipt.write_text(json.dumps({**reference, "tag": "latest"}), encoding="utf-8")
    refused = nexo("plugin", "verify", "--dest", root, env=env, cwd=tmp_path)
    assert refused.code == 1
    words = _printed(refused, "install")
    assert words[3:] == ["acme/hello", "--force", "--dest", str(root)]
    _run(words, env, tmp_path)
    verified = nexo("plugin", "verify", "--dest", root, env=env, cwd=tmp_path)
    assert verified.code == 0, verified.stdout + verified.stderr


def test_an_unreadable_receipt_names_what_the_reinstall_needs(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A receipt that cannot be read names no source: `upgrade` says the reinstall needs one
    (SOURCE, and what it stands for) and names the root; with the source filled in, the
    printed command reinstalls and the same `upgrade` passes."""
    root = tmp_path / "plugins"
    assert nexo("plugin", "install", "acme/hello", "--yes", "--dest", root, env=env).code == 0
    (_installed(root) / ".nexo-install.json").write_text("{not json", encoding="utf-8")
    before = tree_snapshot(root)
    refused = nexo("plugin", "upgrade", "hello", "--dest", root, env=env, cwd=tmp_path)
    assert refused.code == 1
    assert "SOURCE being where it came from: OWNER/REPO@TAG" in refused.stderr
    assert tree_snapshot(root) == before
    words = _printed(refused, "install")
    assert words[3:] == ["SOURCE", "--force", "--dest", str(root)]
    _run([*words[:3], "acme/hello@v1.0.0", *words[4:]], env, tmp_path)
    upgraded = nexo("plugin", "upgrade", "hello", "--dest", root, "--json", env=env)
    assert upgraded.code == 0, upgraded.stderr


def test_upgrade_rollback_and_holds_in_another_root_print_commands_that_find_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """In a root named with --dest, every command upgrade, rollback, hold and unhold print
    names that root (without it, each would look in the default root and find nothing):
    run as printed, each does what the message says."""
    root = tmp_path / "roots" / "a"
    dest = ("--dest", str(root))
    assert nexo("plugin", "install", "acme/hello@v1.0.0", "--yes", *dest, env=env).code == 0
    upgraded = nexo("plugin", "upgrade", "hello@v1.1.0", "--yes", *dest, env=env, cwd=tmp_path)
    assert upgraded.code == 0, upgraded.stderr
    rolled_back = _run(_printed(upgraded, "rollback"), env, tmp_path)
    assert "Rolled back hello to 1.0.0" in rolled_back.stderr
    # Held by the rollback: the command naming a version moves it, unhold releases it.
    words = [word.replace("@TAG", "@v1.1.0") for word in _printed(rolled_back, "upgrade")]
    assert "hello 1.0.0 \u2192 1.1.0" in _run(words, env, tmp_path).stderr
    held = nexo("plugin", "hold", "hello", *dest, env=env, cwd=tmp_path)
    assert held.code == 0, held.stderr
    released = _run(_printed(held, "unhold"), env, tmp_path)
    assert "no longer held at 1.1.0" in released.stderr
    listed = nexo("plugin", "list", *dest, "--json", env=env)
    assert not any(plugin["held"] for plugin in listed.document["plugins"])
    followed = _run(_printed(released, "upgrade"), env, tmp_path)
    assert "hello 1.1.0 is pinned to tag v1.1.0" in followed.stderr


def test_a_plugin_from_a_tarball_gets_a_reinstall_asking_for_its_path(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A receipt does not record a tarball's path: the reinstall `sbom` prints says SOURCE is
    that path (not a bare `install --force`, a usage error); filled in, it passes."""
    tarball = tmp_path / "hello-1.0.0-noarch.tar.gz"
    for name, data in release_assets("hello", "1.0.0").items():
        (tmp_path / name).write_bytes(data)  # the tarball and its .sha256 sidecar
    assert nexo("plugin", "install", tarball, "--yes", env=env, cwd=tmp_path).code == 0
    root = tmp_path / "home" / "state" / "plugins"
    (_installed(root) / "bin" / "hello").write_text("changed\n", encoding="utf-8")
    refused = nexo("plugin", "sbom", "hello", env=env, cwd=tmp_path)
    assert refused.code == 1
    assert "SOURCE being the path of the tarball it was installed from" in refused.stderr
    words = _printed(refused, "install")
    assert words[3:] == ["SOURCE", "--force"]
    _run([*words[:3], str(tarball), *words[4:]], env, tmp_path)
    assert nexo("plugin", "sbom", "hello", "-o", tmp_path / "sbom.json", env=env).code == 0


@pytest.mark.parametrize("frozen", [False, True], ids=["lock-check", "sync-frozen"])
def test_a_stale_lock_elsewhere_prints_a_lock_command_writing_that_lock(
    tmp_path: Path, env: dict[str, str], frozen: bool
) -> None:
    """`lock --check` and `sync --frozen` on a lock that is not ./nexo-plugins.lock: the
    `nexo plugin lock` they print names the wanted set and the lock (bare, it would lock
    ./nexo-plugins.toml, or refuse for want of it); run as printed, the same command passes."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    wanted = fleet / "nexo-plugins.toml"
    wanted.write_text('[plugins.hello]\nsource = "acme/hello"\n', encoding="utf-8")
    lock = fleet / "production.lock"
    root = tmp_path / "plugins"
    command = (
        ("plugin", "sync", "--frozen", "--lock", lock, "--dest", root, "--yes")
        if frozen
        else ("plugin", "lock", "--check", "--file", wanted, "--lock", lock)
    )
    if frozen:
        sync_lock = nexo("plugin", "lock", "--file", wanted, "--lock", lock, env=env)
        assert sync_lock.code == 0, sync_lock.stderr
        wanted.write_text(
            '[plugins.hello]\nsource = "acme/hello"\nversion = "=1.0.0"\n', encoding="utf-8"
        )
    stale = nexo(*command, env=env, cwd=tmp_path)
    assert stale.code == 1, stale.stderr
    before = tree_snapshot(fleet)
    words = _printed(stale, "lock")
    assert tree_snapshot(fleet) == before
    assert words[2:] == ["lock", "--file", str(wanted), "--lock", str(lock)]
    _run(words, env, tmp_path)
    passed = nexo(*command, env=env, cwd=tmp_path)
    assert passed.code == 0, passed.stderr
    assert not (tmp_path / "nexo-plugins.lock").exists()


def test_an_archive_limit_names_the_command_that_raises_it(tmp_path: Path) -> None:
    # A tarball over the entry limit: the refusal names the flag that raises it, which the
    # command refusing it (check) and install both take.
    env = cli.clean_env(NEXO_HOME=str(tmp_path / "home"))
    members = [*plugin_members("hello", "1.0.0")]
    members += [file(f"share/f{index}", "") for index in range(10_001 - len(members))]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    checked = nexo("plugin", "check", str(tarball), "--json", env=env, cwd=tmp_path)
    assert checked.code == 1, checked.stderr
    assert checked.document["kind"] == "archive_unsafe"
    assert "(raise the limit with --max-entries)" in checked.error_line
    root = tmp_path / "root"
    done = nexo(
        "plugin", "install", str(tarball), "--max-entries", "20000", "--dest", str(root),
        "--yes", env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    assert (root / "hello-1.0.0" / "share" / "f0").is_file()
