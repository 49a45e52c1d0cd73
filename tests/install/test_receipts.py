"""Receipts both installers read, and ``verify`` without blind spots.

The reference installer's receipt is a struct of ten required string fields (unknown keys
ignored); ours carries those fields as strings plus ``signature``, ``files`` and ``modes``. A
plugin the reference installed is listed, upgraded and removed by nexo-pkg.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.cli import clean_env, nexo
from support.daemon_walk import discovered_versions
from support.receipts import reference_receipt_struct
from support.tarballs import (
    directory,
    file,
    launcher_text,
    plugin_members,
    release_assets,
    sha256_hex,
    targz,
    tree_snapshot,
    write_plugin,
)

from nexo_pkg.install.pipeline import install
from nexo_pkg.install.receipts import RECEIPT_NAME, Receipt, indented_json, read_receipt
from nexo_pkg.install.verify import tree_modes

from .conftest import InstallEnv


def _write_reference_install(dest: Path, plugin_id: str, version: str, tag: str) -> Path:
    """A plugin directory exactly as the reference installer leaves it."""
    directory = dest / f"{plugin_id}-{version}"
    for member in plugin_members(plugin_id, version):
        path = directory / member.name
        if member.kind == b"5":
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(member.data)
            path.chmod(member.mode)
    receipt = {
        "schema_version": "1.0",
        "id": plugin_id,
        "version": version,
        "owner": "acme",
        "repo": plugin_id,
        "tag": tag,
        "target": "x86_64-unknown-linux-gnu",
        "sha256": "ab" * 32,
        "installed_at": "2026-05-07T18:20:42.123456789+00:00",
        "source": "github-releases",
    }
    # serde_json::to_string_pretty: two-space indent, no trailing newline.
    (directory / RECEIPT_NAME).write_text(json.dumps(receipt, indent=2))
    return directory


def _env(env: InstallEnv) -> dict[str, str]:
    """The environment of a command line run against ``env``'s home and loopback API."""
    return clean_env(
        NEXO_HOME=str(env.home),
        NEXO_GITHUB_API_BASE=env.server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
    )


def _dest(env: InstallEnv) -> tuple[str, str]:
    """The ``--dest`` option naming ``env``'s plugin directory."""
    return ("--dest", str(env.dest))


def test_our_receipts_parse_under_the_reference_struct(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    install_env.server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    remote = install("acme/hello", install_env.make_options())
    local = install(str(write_plugin(tmp_path, "other", "2.0.0")), install_env.make_options())
    ours = reference_receipt_struct(json.loads((remote.path / RECEIPT_NAME).read_text()))
    assert ours["schema_version"] == "1.0"
    assert (ours["owner"], ours["repo"], ours["tag"], ours["source"]) == (
        "acme",
        "hello",
        "latest",
        "github-releases",
    )
    offline = reference_receipt_struct(json.loads((local.path / RECEIPT_NAME).read_text()))
    assert (offline["owner"], offline["repo"], offline["tag"]) == ("", "", "")
    assert offline["source"] == "local-file"


def test_a_reference_install_is_listed_upgraded_and_removed(install_env: InstallEnv) -> None:
    theirs = _write_reference_install(install_env.dest, "hello", "1.0.0", "latest")
    listing = nexo(
        "plugin", "list", "--json", *_dest(install_env), env=_env(install_env), in_process=True
    )
    assert listing.exit_code == 0
    (plugin,) = listing.document["plugins"]
    assert (plugin["id"], plugin["version"], plugin["tag"]) == ("hello", "1.0.0", "latest")
    assert plugin["path"] == str(theirs)
    # No file hashes: verify says so and does not claim the tree is intact.
    verified = nexo(
        "plugin",
        "verify",
        "hello",
        "--json",
        *_dest(install_env),
        env=_env(install_env),
        in_process=True,
    )
    assert verified.exit_code == 1
    assert "no file hashes to check" in verified.document["plugins"][0]["problem"]

    install_env.server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    upgraded = nexo(
        "plugin",
        "upgrade",
        "hello",
        "--yes",
        "--json",
        *_dest(install_env),
        env=_env(install_env),
        in_process=True,
    )
    assert upgraded.exit_code == 0, upgraded.stdout
    assert (upgraded.document["from_version"], upgraded.document["version"]) == ("1.0.0", "1.1.0")
    assert not theirs.exists()
    assert discovered_versions(install_env.dest) == {"hello": "1.1.0"}

    again = _write_reference_install(install_env.dest, "other", "0.1.0", "v0.1.0")
    removed = nexo(
        "plugin",
        "remove",
        "other",
        "--yes",
        "--json",
        *_dest(install_env),
        env=_env(install_env),
        in_process=True,
    )
    assert removed.exit_code == 0
    assert removed.document["removed"] == [str(again)]
    assert discovered_versions(install_env.dest) == {"hello": "1.1.0"}


def test_upgrading_versions_the_reference_left_side_by_side_keeps_one(
    install_env: InstallEnv,
) -> None:
    """The reference's `upgrade` installs the new version beside the old one
    (plugin_admin.rs `run_plugin_upgrade` hands over to the install, which never removes a
    version): our upgrade replaces both, and keeps one previous version for rollback, the
    newest, as it does by default; the other goes."""
    older = _write_reference_install(install_env.dest, "hello", "1.0.0", "latest")
    newer = _write_reference_install(install_env.dest, "hello", "1.1.0", "latest")
    install_env.server.publish("acme", "hello", "v1.2.0", release_assets("hello", "1.2.0"))
    upgraded = nexo("plugin", "upgrade", "hello", "--yes", "--json", *_dest(install_env),
                    env=_env(install_env), in_process=True)  # fmt: skip
    assert upgraded.exit_code == 0, upgraded.stdout
    document = upgraded.document
    assert (document["from_version"], document["version"]) == ("1.1.0", "1.2.0")
    assert not older.exists()
    assert not newer.exists()
    assert discovered_versions(install_env.dest) == {"hello": "1.2.0"}
    [kept] = document["kept_paths"]
    assert json.loads((Path(kept) / RECEIPT_NAME).read_text())["version"] == "1.1.0"
    [pruned] = document["pruned_kept_paths"]
    assert not Path(pruned).exists()
    listing = nexo("plugin", "list", "--json", *_dest(install_env), env=_env(install_env),
                   in_process=True)  # fmt: skip
    versions = sorted((p["version"], p["kept"]) for p in listing.document["plugins"])
    assert versions == [("1.1.0", True), ("1.2.0", False)]


@pytest.mark.parametrize(
    ("owner", "repo"), [("..", "hello"), (".", "hello"), ("acme", ".."), ("acme", "a/../../b")]
)
def test_a_receipt_naming_no_repository_is_never_asked_for(
    install_env: InstallEnv, owner: str, repo: str
) -> None:
    # A receipt's owner `..` would turn `/repos/../hello/releases/latest` into another API
    # path, sent with the token: recorded coordinates are held to the rules of a source.
    directory = _write_reference_install(install_env.dest, "hello", "1.0.0", "latest")
    receipt = json.loads((directory / RECEIPT_NAME).read_text())
    receipt.update(owner=owner, repo=repo)
    (directory / RECEIPT_NAME).write_text(json.dumps(receipt, indent=2))
    before = tree_snapshot(install_env.dest)
    upgraded = nexo("plugin", "upgrade", "hello", "--yes", "--json", *_dest(install_env),
                    env=_env(install_env), in_process=True)  # fmt: skip
    assert upgraded.exit_code == 2, upgraded.stdout
    assert upgraded.document["kind"] == "source_invalid"
    outdated = nexo("plugin", "outdated", "--json", *_dest(install_env), env=_env(install_env),
                    in_process=True)  # fmt: skip
    assert outdated.exit_code == 1, outdated.stdout
    assert outdated.document["plugins"][0]["status"] == "failed"
    assert install_env.server.requests == []
    assert tree_snapshot(install_env.dest) == before


def test_receipts_the_reference_cannot_read_are_orphans(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """plugin_admin.rs:149-165 at eec3f33: `read_install_metadata` deserialises
    `InstallMetadata` (plugin_admin.rs:48-66, ten `String` fields) with serde_json; the
    integer `schema_version` and `null` owner of nexo-pkg's earliest receipts fail it, so the
    reference lists such a plugin as an orphan: list shows it as unreadable, verify fails
    naming it, remove removes it."""
    result = install(str(write_plugin(tmp_path, "hello", "1.0.0")), install_env.make_options())
    path = result.path / RECEIPT_NAME
    document = json.loads(path.read_text())
    document.update(schema_version=1, owner=None, repo=None, tag=None)
    del document["modes"]
    path.write_text(json.dumps(document))
    listing = nexo(
        "plugin", "list", "--json", *_dest(install_env), env=_env(install_env), in_process=True
    )
    assert listing.document["plugins"] == []
    [entry] = listing.document["unreadable"]
    assert entry["problem"] == (
        "receipt unreadable: invalid type: integer `1`, expected a string (field `schema_version`)"
    )
    verified = nexo(
        "plugin", "verify", "--json", *_dest(install_env), env=_env(install_env), in_process=True
    )
    assert verified.exit_code == 1
    assert (
        nexo(
            "plugin",
            "remove",
            "hello",
            "--yes",
            "--json",
            *_dest(install_env),
            env=_env(install_env),
            in_process=True,
        ).exit_code
        == 0
    )
    assert not result.path.exists()


@pytest.mark.parametrize("receipt", ["unreadable", "missing"])
def test_installing_over_a_directory_without_a_readable_receipt_says_so(
    install_env: InstallEnv, tmp_path: Path, receipt: str
) -> None:
    """The same tarball over its own install whose receipt cannot be read is not "from a
    different archive": the refusal says the receipt is the problem, and --force mends it."""
    tarball = write_plugin(tmp_path, "hello", "1.0.0")
    result = install(str(tarball), install_env.make_options())
    path = result.path / RECEIPT_NAME
    if receipt == "missing":
        path.unlink()
    else:
        path.write_text(json.dumps({**json.loads(path.read_text()), "owner": None}))
    before = tree_snapshot(install_env.dest)
    refused = nexo("plugin", "install", str(tarball), "--yes", "--json", *_dest(install_env),
                   env=_env(install_env), in_process=True)  # fmt: skip
    assert refused.exit_code == 1
    assert refused.document["kind"] == "already_installed"
    message = refused.document["error"]
    assert "its install receipt is missing or unreadable (" in message
    assert "different archive" not in message
    assert message.endswith("; use --force to replace it")
    assert tree_snapshot(install_env.dest) == before
    forced = nexo("plugin", "install", str(tarball), "--yes", "--force", "--json",
                  *_dest(install_env), env=_env(install_env), in_process=True)  # fmt: skip
    assert forced.exit_code == 0, forced.stderr
    assert json.loads(path.read_text())["owner"] == ""


# -- verify without blind spots ---------------------------------------------------------------


@pytest.fixture
def installed(install_env: InstallEnv, tmp_path: Path) -> Path:
    return install(str(write_plugin(tmp_path, "hello", "1.0.0")), install_env.make_options()).path


def _verify(env: InstallEnv) -> tuple[int, list[dict[str, Any]]]:
    """``verify --json`` in a real process with a deadline: it must never hang."""
    completed = nexo(
        "plugin",
        "verify",
        *_dest(env),
        "--json",
        env=clean_env(NEXO_HOME=str(env.home)),
        timeout=60,
    )
    return completed.code, completed.document["plugins"]


def test_a_deleted_or_corrupted_receipt_fails_by_name(
    install_env: InstallEnv, installed: Path
) -> None:
    (installed / RECEIPT_NAME).write_text("{")
    code, reports = _verify(install_env)
    assert code == 1
    assert [(Path(r["path"]).name, r["ok"]) for r in reports] == [("hello-1.0.0", False)]
    assert reports[0]["problem"].startswith("receipt unreadable: ")
    (installed / RECEIPT_NAME).unlink()
    code, reports = _verify(install_env)
    assert code == 1
    assert reports[0]["problem"] == "no install receipt"


@pytest.mark.parametrize(("key", "value"), [("id", "other"), ("version", "9.9.9")])
def test_a_receipt_naming_another_plugin_than_its_manifest_fails(
    install_env: InstallEnv, installed: Path, key: str, value: str
) -> None:
    # Every file still matches its hash, but the daemon loads the manifest's plugin, not the
    # one the edited receipt names (which `list`, `upgrade` and `remove` would act on).
    receipt = json.loads((installed / RECEIPT_NAME).read_text())
    receipt[key] = value
    (installed / RECEIPT_NAME).write_text(json.dumps(receipt))
    code, reports = _verify(install_env)
    assert code == 1
    (report,) = reports
    assert (report["ok"], report[key]) == (False, value)
    assert (report["modified"], report["missing"], report["extra"]) == ([], [], [])
    named = "other 1.0.0" if key == "id" else "hello 9.9.9"
    assert report["problem"] == (
        f"the receipt names {named}, but its nexo-plugin.toml is hello 1.0.0 "
        "(the receipt was edited)"
    )


@pytest.mark.parametrize(
    "value", ["0000-01-01T00:00:00Z", "2026-05-07T23:59:60Z"], ids=["year-0000", "leap-second"]
)
def test_verify_and_doctor_both_name_an_edited_receipt_beside_a_date_only_the_daemon_reads(
    install_env: InstallEnv, installed: Path, value: str
) -> None:
    """The manifest holds a date-time the daemon's parser takes and Python's datetime does
    not (an opaque ``http_server`` value); the receipt was edited to name another version.
    ``verify`` and ``doctor`` read that manifest as the daemon does, and so both name the
    edited receipt in the same words (before, ``verify`` could not read the manifest and
    said ``ok``)."""
    manifest = installed / "nexo-plugin.toml"
    text = manifest.read_text() + f"http_server = {value}\n"
    manifest.write_text(text)
    receipt = json.loads((installed / RECEIPT_NAME).read_text())
    receipt["files"]["nexo-plugin.toml"] = hashlib.sha256(text.encode()).hexdigest()
    receipt["version"] = "0.9.0"
    (installed / RECEIPT_NAME).write_text(json.dumps(receipt))
    problem = (
        "the receipt names hello 0.9.0, but its nexo-plugin.toml is hello 1.0.0 "
        "(the receipt was edited)"
    )
    code, reports = _verify(install_env)
    assert (code, [(report["ok"], report["problem"]) for report in reports]) == (
        1, [(False, problem)]
    )  # fmt: skip
    doctor = nexo(
        "plugin", "doctor", "--no-check", *_dest(install_env), "--json",
        env=clean_env(NEXO_HOME=str(install_env.home)), timeout=60,
    )  # fmt: skip
    verified = [f for f in doctor.document["findings"] if f["check"] == "verify"]
    assert [(f["severity"], f["message"]) for f in verified] == [
        ("error", f"files differ from the install receipt: {problem}")
    ]


def test_a_plugin_directory_replaced_by_a_link_fails(
    install_env: InstallEnv, installed: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    installed.rename(elsewhere)
    installed.symlink_to(elsewhere)
    code, reports = _verify(install_env)
    assert code == 1
    assert Path(reports[0]["path"]).name == "hello-1.0.0"
    assert "symbolic link" in reports[0]["problem"]
    by_id = nexo(
        "plugin",
        "verify",
        "hello",
        "--json",
        *_dest(install_env),
        env=_env(install_env),
        in_process=True,
    )
    assert by_id.exit_code == 1
    assert "symbolic link" in by_id.document["plugins"][0]["problem"]


@pytest.mark.parametrize(
    ("name", "mode"), [("bin/hello", 0o4755), ("lib/plugin/main.py", 0o777), ("lib", 0o777)]
)
def test_changed_modes_fail(install_env: InstallEnv, installed: Path, name: str, mode: int) -> None:
    (installed / name).chmod(mode)
    code, reports = _verify(install_env)
    assert code == 1
    assert reports[0]["mode_changed"] == [name]
    assert reports[0]["modified"] == []


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o2755, 0o1755])
def test_a_changed_mode_of_the_plugin_directory_itself_fails(
    install_env: InstallEnv, installed: Path, mode: int
) -> None:
    """Install makes the plugin directory 0755 whatever the umask; one every user (or the
    group) could write lets anyone add or swap files the daemon runs."""
    installed.chmod(mode)
    try:
        done = nexo("plugin", "verify", *_dest(install_env), "--json",
                    env=_env(install_env), in_process=True)  # fmt: skip
        assert done.exit_code == 1
        (report,) = done.document["plugins"]
        assert (report["ok"], report["mode_changed"], report["modified"]) == (False, ["."], [])
        text = nexo("plugin", "verify", *_dest(install_env), env=_env(install_env),
                    in_process=True)  # fmt: skip
        assert text.exit_code == 1
        assert "  mode:     . (the plugin directory)" in text.stdout.splitlines()
    finally:
        installed.chmod(0o755)
    again = nexo("plugin", "verify", *_dest(install_env), env=_env(install_env), in_process=True)
    assert again.exit_code == 0, again.stdout


def test_fifos_are_never_opened(install_env: InstallEnv, installed: Path) -> None:
    target = installed / "lib/plugin/main.py"
    target.unlink()
    os.mkfifo(target)
    os.mkfifo(installed / "lib/plugin/extra.fifo")
    code, reports = _verify(install_env)
    assert code == 1
    assert reports[0]["modified"] == ["lib/plugin/main.py"]
    assert reports[0]["extra"] == ["lib/plugin/extra.fifo"]
    receipt = installed / RECEIPT_NAME
    receipt.unlink()
    os.mkfifo(receipt)
    code, reports = _verify(install_env)
    assert code == 1
    assert "not a regular file" in reports[0]["problem"]


def test_the_receipt_records_every_mode(install_env: InstallEnv, installed: Path) -> None:
    receipt = json.loads((installed / RECEIPT_NAME).read_text())
    assert receipt["modes"] == {
        "bin": "0755",
        "bin/hello": "0755",
        "lib": "0755",
        "lib/plugin": "0755",
        "lib/plugin/main.py": "0644",
        "nexo-plugin.toml": "0644",
    }
    assert receipt["files"]["bin/hello"] == sha256_hex((installed / "bin/hello").read_bytes())


def test_the_receipt_is_what_a_walk_of_the_tree_would_write(
    umask: int, install_env: InstallEnv, tmp_path: Path
) -> None:
    """The modes come from the extraction, not from a walk of the staged tree; the receipt
    is byte for byte the one a walk gives, the launcher made 0755 after extraction
    included, under each umask."""
    del umask
    members = [
        *(m for m in plugin_members("hello", "1.0.0") if m.name != "bin/hello"),
        file("bin/hello", launcher_text(), mode=0o644),
        file("lib/vendor/pkg/deep/mod.py", "X = 1\n"),
        directory("lib/open", mode=0o777),
        file("lib/open/data.txt", "x", mode=0o666),
        file("lib/tool", "#!/bin/sh\n", mode=0o700),
    ]
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=targz(members))
    installed = install(str(tarball), install_env.make_options()).path
    written = (installed / RECEIPT_NAME).read_bytes()
    walked = tree_modes(installed)
    del walked[RECEIPT_NAME]
    assert walked["bin/hello"] == 0o755
    expected = replace(read_receipt(installed), modes=walked)
    assert written == (indented_json(expected.to_json()) + "\n").encode()


def test_one_root_holding_an_install_by_each_tool(install_env: InstallEnv) -> None:
    install_env.server.publish("acme", "ours", "v1.0.0", release_assets("ours", "1.0.0"))
    install("acme/ours", install_env.make_options())
    _write_reference_install(install_env.dest, "theirs", "0.1.0", "latest")
    listing = nexo(
        "plugin", "list", "--json", *_dest(install_env), env=_env(install_env), in_process=True
    )
    assert [(p["id"], p["version"]) for p in listing.document["plugins"]] == [
        ("ours", "1.0.0"),
        ("theirs", "0.1.0"),
    ]
    assert discovered_versions(install_env.dest) == {"ours": "1.0.0", "theirs": "0.1.0"}
    install_env.server.publish("acme", "ours", "v1.1.0", release_assets("ours", "1.1.0"))
    install_env.server.publish("acme", "theirs", "v0.2.0", release_assets("theirs", "0.2.0"))
    for plugin_id in ("ours", "theirs"):
        upgraded = nexo(
            "plugin",
            "upgrade",
            plugin_id,
            "--yes",
            "--json",
            *_dest(install_env),
            env=_env(install_env),
            in_process=True,
        )
        assert upgraded.exit_code == 0, upgraded.stdout
        assert discovered_versions(install_env.dest).keys() == {"ours", "theirs"}
    assert discovered_versions(install_env.dest) == {"ours": "1.1.0", "theirs": "0.2.0"}
    for plugin_id in ("ours", "theirs"):
        assert (
            nexo(
                "plugin",
                "remove",
                plugin_id,
                "--yes",
                "--json",
                *_dest(install_env),
                env=_env(install_env),
                in_process=True,
            ).exit_code
            == 0
        )
    assert discovered_versions(install_env.dest) == {}


def test_a_hidden_plugin_directory_is_verified_too(
    install_env: InstallEnv, installed: Path
) -> None:
    hidden = install_env.dest / ".sneaky"
    hidden.mkdir()
    (hidden / "plugin.toml").write_text('[plugin]\nid = "sneaky"\nversion = "1.0.0"\n')
    code, reports = _verify(install_env)
    assert code == 1
    failed = [(Path(r["path"]).name, r["problem"]) for r in reports if not r["ok"]]
    assert failed == [(".sneaky", "no install receipt")]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_verify_never_opens_a_manifest_that_became_a_fifo_after_it_was_hashed(
    installed: Path, install_env: InstallEnv, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest is read a second time to compare it with the receipt; if it became a FIFO
    between the two reads (a plugin or another user racing verify), that read refuses it as
    the hashing does: verify returns at once rather than block on it."""
    import threading

    from nexo_pkg.install import verify
    from nexo_pkg.install.receipts import scan_installed

    manifest = installed / "nexo-plugin.toml"
    hashed = verify.sha256_file  # type: ignore[attr-defined]

    def hash_then_swap(path: Path, *, regular: bool = False) -> str:
        digest = hashed(path, regular=regular)
        if path == manifest:  # the racer swaps it just after it was hashed
            manifest.unlink()
            os.mkfifo(manifest)
        return digest

    monkeypatch.setattr(verify, "sha256_file", hash_then_swap)
    (item,) = scan_installed(install_env.dest)
    reports: list[Any] = []
    worker = threading.Thread(target=lambda: reports.append(verify.verify_installed(item)))
    worker.start()
    worker.join(10)
    blocked = worker.is_alive()
    if blocked:  # let the old reader go: a writer that closes at once gives it an end
        os.close(os.open(manifest, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(10)
    assert not blocked, "verify blocked reading a FIFO"
    [report] = reports
    assert (report.modified, report.problem) == ((), None)


def _receipt(source: str, tag: str, **fields: Any) -> Receipt:
    return Receipt(
        id="hello", version="1.0.0", owner=fields.get("owner"), repo=fields.get("repo"),
        tag=tag, target="x86_64-unknown-linux-gnu", sha256="0" * 64,
        installed_at="2026-01-01T00:00:00Z", source=source, signature={}, files={},
        registry=fields.get("registry"), resolved_tag=fields.get("resolved_tag"),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("receipt", "upgradable", "binds", "pin"),
    [
        # A release installed from an explicit tag: upgrade stays on it, with its target.
        (
            _receipt(
                "github-releases", "v1.0.0", owner="acme", repo="hello", resolved_tag="v1.0.0"
            ),
            True,
            True,
            "v1.0.0",
        ),
        # A release installed as the latest: it follows the newest.
        (
            _receipt(
                "github-releases", "latest", owner="acme", repo="hello", resolved_tag="v1.0.0"
            ),
            True,
            True,
            None,
        ),
        # A registry install's tag is the release it was mirrored from, not a pin.
        (
            _receipt(
                "oci-registry",
                "v1.0.0",
                registry="oci://127.0.0.1:5000/p/hello@sha256:" + "0" * 64,
                resolved_tag="v1.0.0",
            ),
            True,
            False,
            None,
        ),
        # A local tarball has nothing to upgrade from.
        (_receipt("local-file", ""), False, True, None),
        # An unknown kind is tried, and its upgrade says why it cannot be.
        (_receipt("no-such-kind", "v1.0.0", resolved_tag="v1.0.0"), True, True, "v1.0.0"),
    ],
    ids=["release-pinned", "release-latest", "registry", "local", "unknown"],
)
def test_a_receipt_asks_the_source_seam_what_its_upgrade_does(
    receipt: Receipt, upgradable: bool, binds: bool, pin: str | None
) -> None:
    """What ``upgrade``, ``outdated``, ``rollback`` and the hold commands ask of a receipt is
    answered by the route of ``sources`` for the receipt's whole origin."""
    assert receipt.upgradable is upgradable
    assert receipt.binds_upgrade is binds
    assert receipt.upgrade_pin == pin
