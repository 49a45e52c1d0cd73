"""``nexo plugin install/upgrade/list/remove/verify`` end to end: exit codes, JSON, output."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stderr import without_notes
from support.tarballs import plugin_tarball, release_assets, tree_snapshot, write_plugin

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("NEXO_GITHUB_API_BASE", server.url)
    monkeypatch.setenv("NEXO_HTTP_RETRY_BASE_MS", "1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return tmp_path / "home"


def test_install_json_and_idempotence(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    code, out, err = nexo("plugin", "install", "acme/hello", "--json", in_process=True)
    assert code == 0, err
    document = json.loads(out)
    assert document["ok"] is True
    assert document["id"] == "hello"
    assert document["version"] == "1.0.0"
    assert document["target"] == "noarch"
    assert document["path"] == str(home / "state/plugins/hello-1.0.0")
    assert document["source"]["type"] == "github-releases"
    assert document["signature"]["status"] == "unsigned"
    assert document["was_already_present"] is False
    assert "NOT SIGNED" in err
    code, out, _ = nexo("plugin", "install", "acme/hello@v1.0.0", "--json",
                        in_process=True)  # fmt: skip
    assert code == 0
    again = json.loads(out)
    assert again["was_already_present"] is True
    assert again["kind"] == "already_installed"
    assert "kind" not in document


def test_human_output_goes_to_stderr(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    code, out, err = nexo("plugin", "install", "acme/hello", "--yes", in_process=True)
    assert code == 0
    assert out == ""
    assert "Plugin:       hello 1.0.0" in err
    assert "Signer:       unsigned" in err
    assert "Installed hello 1.0.0" in err


def test_dry_run(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    code, _, err = nexo("plugin", "install", "acme/hello", "--dry-run",
                        in_process=True)  # fmt: skip
    assert code == 0
    assert "Dry run" in err
    assert not (home / "state/plugins").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["install", "acme/hello", "--require-signature", "--skip-signature-verify"],
        ["install", "acme/hello", "--max-entries", "0"],
        ["install", "acme/hello", "--max-total-size", "lots"],
        ["install", "acme/hello", "--target", "../../x"],
        ["install", "acme/hello", "--github-api-url", "file:///etc"],
        ["install", "acme/hello", "--bogus"],
        ["install"],
    ],
)
def test_usage_errors_exit_2(home: Path, server: GitHubServer, args: list[str]) -> None:
    code, _, err = nexo("plugin", *args, in_process=True)
    assert code == 2
    assert "Traceback" not in err
    assert server.requests == []


def test_refusals_exit_1_with_json_kind(home: Path, server: GitHubServer, tmp_path: Path) -> None:
    code, out, err = nexo("plugin", "install", "../x", "--json", in_process=True)
    # A malformed SOURCE is a usage error like any bad argument.
    assert code == 2
    assert json.loads(out)["kind"] == "source_invalid"
    assert without_notes(err).startswith("error: ")
    big = plugin_tarball("hello", "1.0.0", payload=b"\0" * 4096)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=big)
    code, out, _ = nexo("plugin", "install", str(tarball), "--json", "--max-entry-size", "1K",
                        in_process=True)  # fmt: skip
    assert code == 1
    assert json.loads(out)["kind"] == "archive_unsafe"
    assert not (home / "state/plugins").exists()
    code, out, _ = nexo("plugin", "install", str(tarball), "--json", in_process=True)
    assert code == 0
    assert json.loads(out)["source"]["type"] == "local-file"


def test_list_verify_remove(home: Path, tmp_path: Path) -> None:
    for plugin_id in ("hello", "other"):
        tarball = write_plugin(tmp_path / "dist", plugin_id, "1.0.0")
        assert nexo("plugin", "install", str(tarball), "--yes",
                    in_process=True)[0] == 0  # fmt: skip
    (home / "state/plugins/stray").mkdir()
    code, out, _ = nexo("plugin", "list", "--json", "--include-orphan",
                        in_process=True)  # fmt: skip
    assert code == 0
    listing = json.loads(out)
    assert [(p["id"], p["version"], p["source"]) for p in listing["plugins"]] == [
        ("hello", "1.0.0", "local-file"),
        ("other", "1.0.0", "local-file"),
    ]
    assert [Path(o["path"]).name for o in listing["orphans"]] == ["stray"]
    code, out, _ = nexo("plugin", "list", in_process=True)
    assert code == 0
    # One line per plugin on stdout: `nexo plugin list | wc -l` counts plugins.
    assert [line.split()[0] for line in out.splitlines()] == ["hello", "other"]
    assert "stray" not in out

    # A directory the daemon could load that has no receipt fails verification by name.
    code, out, _ = nexo("plugin", "verify", "--json", in_process=True)
    assert code == 1
    failed = [p for p in json.loads(out)["plugins"] if not p["ok"]]
    assert [(Path(p["path"]).name, p["problem"]) for p in failed] == [
        ("stray", "no install receipt")
    ]
    code, out, _ = nexo("plugin", "verify", in_process=True)
    stray = home / "state/plugins/stray"
    assert code == 1
    assert f"CHANGED  {stray}\n  no install receipt\n" in out, out  # its path, once
    (home / "state/plugins/stray").rmdir()
    assert nexo("plugin", "verify", in_process=True)[0] == 0
    installed = home / "state/plugins/hello-1.0.0"
    (installed / "lib/plugin/main.py").write_text("edited")
    (installed / "bin/hello").unlink()
    (installed / "lib/new.py").write_text("added")
    code, out, _ = nexo("plugin", "verify", "hello", "--json", in_process=True)
    assert code == 1
    (report,) = json.loads(out)["plugins"]
    assert report["modified"] == ["lib/plugin/main.py"]
    assert report["missing"] == ["bin/hello"]
    assert report["extra"] == ["lib/new.py"]
    code, out, _ = nexo("plugin", "verify", in_process=True)
    assert code == 1
    assert "modified: lib/plugin/main.py" in out
    assert nexo("plugin", "verify", "other", in_process=True)[0] == 0

    code, out, _ = nexo("plugin", "remove", "hello", "--yes", "--json",
                        in_process=True)  # fmt: skip
    assert code == 0
    assert json.loads(out)["removed"] == [str(installed)]
    assert not installed.exists()
    for command in (["remove", "hello", "--json"], ["verify", "hello", "--json"]):
        code, out, _ = nexo("plugin", *command, in_process=True)
        assert code == 1
        assert json.loads(out)["kind"] == "not_installed"


def test_upgrade(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    code, _, err = nexo("plugin", "upgrade", "hello", in_process=True)
    assert code == 0
    assert "up to date" in err
    server.publish("acme", "hello", "v1.2.0", release_assets("hello", "1.2.0"))
    code, out, _ = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert code == 0
    document = json.loads(out)
    assert (document["from_version"], document["version"]) == ("1.0.0", "1.2.0")
    assert document["upgraded"] is True
    # The version replaced is kept out of the daemon's sight, for rollback.
    assert document["removed_old"] is False
    (kept,) = document["kept_paths"]
    assert json.loads((Path(kept) / ".nexo-install.json").read_text())["version"] == "1.0.0"
    server.latest[("acme", "hello")] = "v1.0.0"
    before = tree_snapshot(home / "state/plugins")
    code, out, _ = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert code == 1
    assert json.loads(out)["kind"] == "downgrade_refused"
    assert tree_snapshot(home / "state/plugins") == before


def test_upgrade_to_an_older_tag_names_that_tag_not_the_latest(
    home: Path, server: GitHubServer
) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"), latest=False)
    server.publish("acme", "hello", "v1.2.0", release_assets("hello", "1.2.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    before = tree_snapshot(home / "state/plugins")
    refused = nexo("plugin", "upgrade", "hello@v1.0.0", "--json", in_process=True)
    assert refused.code == 1
    document = refused.document
    assert document["kind"] == "downgrade_refused"
    assert document["error"].startswith("release v1.0.0 of acme/hello carries hello 1.0.0, ")
    assert "latest" not in document["error"]
    assert tree_snapshot(home / "state/plugins") == before


def test_a_local_tarball_not_named_as_pack_names_it_says_how_to_name_it(
    home: Path, tmp_path: Path
) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    renamed = tarball.rename(tarball.with_name("my plugin.tar.gz"))
    sidecar = tarball.with_name(tarball.name + ".sha256")
    sidecar.rename(renamed.with_name(renamed.name + ".sha256"))
    before = tree_snapshot(tmp_path)
    refused = nexo("plugin", "install", str(renamed), "--yes", "--json", in_process=True)
    assert refused.code == 1
    assert refused.document["kind"] == "source_invalid"
    assert refused.document["error"] == (
        "my plugin.tar.gz is not named <id>-<version>-<target>.tar.gz; rename it as `nexo "
        "plugin pack` names a release tarball (e.g. hello-1.0.0-noarch.tar.gz, from its "
        "manifest's id and version), its .sha256 and signature files with it"
    )
    assert tree_snapshot(tmp_path) == before
    assert tree_snapshot(home) == {}


def test_a_local_tarball_that_fails_its_sidecar_speaks_of_the_file_not_a_download(
    home: Path, tmp_path: Path
) -> None:
    """A tarball on disk was never downloaded: a `.sha256` beside it that does not match says
    what the tarball hashes to, in one line ending with its kind, and nothing is written."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    sidecar = tarball.with_name(tarball.name + ".sha256")
    sidecar.write_text(f"{'0' * 64}  {tarball.name}\n")
    before = tree_snapshot(tmp_path)
    refused = nexo("plugin", "install", str(tarball), "--yes", env=dict(os.environ))
    assert refused.code == 1, refused.stderr
    [line] = without_notes(refused.stderr).splitlines()
    assert line.startswith(
        f"error: checksum mismatch for {tarball.name}: {tarball.name}.sha256 beside it says "
        f"{'0' * 64}, the tarball is "
    ), line
    assert line.endswith(" [checksum_mismatch]"), line
    assert "download" not in line
    assert refused.stdout == ""
    assert tree_snapshot(tmp_path) == before
    assert not home.exists()


def test_real_process_has_no_traceback(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    environment = dict(os.environ)
    # A real process: what a user runs, with the interpreter's own start-up.
    ok = nexo("plugin", "install", "acme/hello", "--json", env=environment)
    assert ok.code == 0, ok.stderr
    assert json.loads(ok.stdout)["ok"] is True
    server.fail(status=500, times=None)
    failed = nexo("plugin", "install", "acme/hello@v2.0.0", "--json", env=environment)
    assert failed.code == 1
    assert json.loads(failed.stdout)["kind"] == "network"
    assert "Traceback" not in failed.stderr
    assert without_notes(failed.stderr).count("\n") == 1


def test_upgrade_refuses_a_release_that_is_now_another_plugin(
    home: Path, server: GitHubServer
) -> None:
    """A repository whose latest release ships another plugin id is no upgrade of the one
    installed from it: refused naming both, for one id and under --all, the root untouched."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", "--yes", in_process=True).code == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("world", "2.0.0"))
    root = home / "state/plugins"
    before = tree_snapshot(root)
    code, out, _ = nexo("plugin", "upgrade", "hello", "--yes", "--json", in_process=True)
    assert code == 1
    document = json.loads(out)
    assert document["kind"] == "asset_not_found"
    assert "is plugin 'world', not 'hello'" in document["error"]
    code, out, _ = nexo("plugin", "upgrade", "--all", "--yes", "--json", in_process=True)
    assert code == 1
    [entry] = json.loads(out)["plugins"]
    assert (entry["id"], entry["kind"]) == ("hello", "asset_not_found")
    assert tree_snapshot(root) == before


def test_upgrade_all(home: Path, server: GitHubServer, tmp_path: Path) -> None:
    for plugin_id in ("hello", "world", "stale"):
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
    local = write_plugin(tmp_path / "dist", "local", "1.0.0")
    assert nexo("plugin", "install", str(local), "--yes", in_process=True)[0] == 0
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    server.publish("acme", "world", "v2.0.0", release_assets("world", "2.0.0"))
    # stale's latest release goes back to an older version: refused, the others go on.
    server.publish("acme", "stale", "v0.9.0", release_assets("stale", "0.9.0"))
    code, out, err = nexo("plugin", "upgrade", "--all", "--json", in_process=True)
    assert code == 1
    document = json.loads(out)
    assert document["ok"] is False
    by_id = {entry["id"]: entry for entry in document["plugins"]}
    assert set(by_id) == {"hello", "world", "stale"}
    assert (by_id["hello"]["from_version"], by_id["hello"]["version"]) == ("1.0.0", "1.1.0")
    assert (by_id["world"]["from_version"], by_id["world"]["version"]) == ("1.0.0", "2.0.0")
    assert by_id["stale"]["kind"] == "downgrade_refused"
    assert "skipped local: installed from a local file" in err
    [skipped] = document["skipped"]
    assert (skipped["id"], skipped["version"], skipped["reason"]) == ("local", "1.0.0", "local")
    assert Path(skipped["path"]).name == "local-1.0.0"
    code, out, _ = nexo("plugin", "list", "--json", in_process=True)
    versions = {p["id"]: p["version"] for p in json.loads(out)["plugins"] if not p["kept"]}
    assert versions == {"hello": "1.1.0", "world": "2.0.0", "stale": "1.0.0", "local": "1.0.0"}
    # Nothing left to do: every plugin is up to date (stale with --allow-downgrade aside).
    code, out, _ = nexo("plugin", "upgrade", "--all", "--json", "--allow-downgrade",
                        in_process=True)  # fmt: skip
    assert code == 0, out
    assert all(entry["ok"] for entry in json.loads(out)["plugins"])


@pytest.mark.parametrize("args", [["upgrade"], ["upgrade", "hello", "--all"]])
def test_upgrade_needs_one_id_or_all(home: Path, args: list[str]) -> None:
    code, out, err = nexo("plugin", *args, "--json", in_process=True)
    assert code == 2
    assert json.loads(out)["kind"] == "usage"
    assert "--all" in err


def test_upgrade_all_looks_every_release_up_first_and_once(
    home: Path, server: GitHubServer
) -> None:
    """``upgrade --all`` reads every repository's latest release before the first upgrade
    (several at a time) and each upgrade starts from that answer: one release request per
    plugin, the same outcome as before; one whose lookup fails is asked again by its own
    upgrade and fails alone."""
    ids = ("alpha", "bravo", "charlie", "delta")
    for plugin_id in ids:
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
    for plugin_id in ("alpha", "charlie"):
        server.publish("acme", plugin_id, "v1.1.0", release_assets(plugin_id, "1.1.0"))
    server.requests.clear()
    code, out, err = nexo("plugin", "upgrade", "--all", "--json", in_process=True)
    assert code == 0, err
    by_id = {entry["id"]: entry for entry in json.loads(out)["plugins"]}
    assert {i: by_id[i]["version"] for i in ids} == {
        "alpha": "1.1.0", "bravo": "1.0.0", "charlie": "1.1.0", "delta": "1.0.0",
    }  # fmt: skip
    paths = [r.path for r in server.requests]
    latest = sorted(path for path in paths if path.endswith("/releases/latest"))
    assert latest == [f"/repos/acme/{plugin_id}/releases/latest" for plugin_id in ids]
    # Every lookup came before the first download.
    last_lookup = max(i for i, path in enumerate(paths) if path.endswith("/releases/latest"))
    assert all("/assets/" not in path for path in paths[:last_lookup])
    server.fail(status=404, times=1, path_contains="/repos/acme/delta/releases/latest")
    server.publish("acme", "delta", "v1.2.0", release_assets("delta", "1.2.0"))
    server.fail(status=500, times=None, path_contains="/repos/acme/bravo/")
    code, out, _ = nexo("plugin", "upgrade", "--all", "--json", in_process=True)
    assert code == 1
    by_id = {entry["id"]: entry for entry in json.loads(out)["plugins"]}
    assert by_id["delta"]["version"] == "1.2.0"  # its own upgrade asked again
    assert by_id["bravo"]["kind"] == "network"
    assert by_id["alpha"]["ok"]
    assert by_id["charlie"]["ok"]


def test_upgrade_all_does_not_look_up_a_held_plugin(home: Path, server: GitHubServer) -> None:
    for plugin_id in ("alpha", "bravo"):
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
        server.publish("acme", plugin_id, "v1.1.0", release_assets(plugin_id, "1.1.0"))
    assert nexo("plugin", "hold", "bravo", in_process=True)[0] == 0
    server.requests.clear()
    code, out, err = nexo("plugin", "upgrade", "--all", "--json", in_process=True)
    assert code == 0, err
    by_id = {entry["id"]: entry for entry in json.loads(out)["plugins"]}
    assert by_id["alpha"]["version"] == "1.1.0"
    assert by_id["bravo"]["version"] == "1.0.0"
    assert not [r.path for r in server.requests if "/acme/bravo/" in r.path]


@pytest.mark.parametrize(
    ("asked", "shipped"),
    [
        ("x86_64-pc-windows-gnu", "x86_64-pc-windows-musl"),
        ("x-gnu", "x-musl"),
    ],
)
def test_any_gnu_target_falls_back_to_its_musl_tarball(
    home: Path, server: GitHubServer, asked: str, shipped: str
) -> None:
    """The reference installer's musl fallback takes `-gnu` off the end of any target and puts
    `-musl` there, then finds the tarball by its whole name (ext-installer `resolve_release`:
    `format!("{plugin_id}-{version_str}-{target}.tar.gz")`), whatever the triple's shape. The
    receipt records the target asked for."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", target=shipped))
    result = nexo("plugin", "install", "acme/hello", "--target", asked, "--yes", "--json")
    assert result.code == 0, result.stderr
    assert (result.document["ok"], result.document["target"]) == (True, shipped)
    receipt = json.loads((home / "state/plugins/hello-1.0.0/.nexo-install.json").read_text())
    assert receipt["target"] == asked
