"""``nexo plugin outdated`` and ``rollback`` end to end, against the loopback GitHub."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import manifest_text, release_assets, tree_snapshot, write_plugin

CLEARED = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "GITHUB_API_URL", "NEXO_INSTALL_TARGET")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    return use_stand_in(monkeypatch, tmp_path, server, cleared=CLEARED)


def _assets_downloaded(server: GitHubServer) -> list[str]:
    """The names of release assets whose bytes were downloaded."""
    names = []
    for asset_id, (release, asset) in server.assets.items():
        if any(
            request.path.endswith(f"/assets/{asset_id}")
            or request.path.endswith(f"/releases/download/{release.tag}/{asset.name}")
            for request in server.requests
        ):
            names.append(asset.name)
    return sorted(names)


def test_outdated_reads_metadata_only(home: Path, server: GitHubServer, tmp_path: Path) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.publish("acme", "world", "v2.0.0", release_assets("world", "2.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    assert nexo("plugin", "install", "acme/world", in_process=True)[0] == 0
    local = write_plugin(tmp_path / "dist", "local", "1.0.0")
    assert nexo("plugin", "install", str(local), "--yes", in_process=True)[0] == 0
    server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    server.requests.clear()

    code, out, err = nexo("plugin", "outdated", "--json", in_process=True)
    assert code == 0, err
    document = json.loads(out)
    assert document["ok"] is True
    assert document["outdated"] is True
    by_id = {entry["id"]: entry for entry in document["plugins"]}
    assert by_id["hello"]["status"] == "outdated"
    assert (by_id["hello"]["installed"], by_id["hello"]["latest"]) == ("1.0.0", "1.1.0")
    assert by_id["hello"]["latest_tag"] == "v1.1.0"
    assert by_id["hello"]["source"] == "acme/hello"
    assert by_id["world"]["status"] == "current"
    assert by_id["local"]["status"] == "local"
    assert by_id["local"]["latest"] is None
    # Release JSON only: each release's tarball names settle it, so no asset at all (no
    # manifest asset, tarball, sidecar or signature) was fetched.
    assert _assets_downloaded(server) == []
    # Nothing was installed either.
    code, out, _ = nexo("plugin", "list", "--json", in_process=True)
    assert {p["id"]: p["version"] for p in json.loads(out)["plugins"]}["hello"] == "1.0.0"


def test_outdated_text_and_exit_code(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    code, out, _ = nexo("plugin", "outdated", "--exit-code", in_process=True)
    assert code == 0
    assert "hello" in out
    assert "up to date" in out
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    code, out, _ = nexo("plugin", "outdated", in_process=True)
    assert code == 0
    assert out.splitlines()[0].split() == ["ID", "INSTALLED", "LATEST", "STATUS", "SOURCE"]
    assert "outdated" in out
    code, out, _ = nexo("plugin", "outdated", "hello", "--exit-code", in_process=True)
    assert code == 1
    assert "2.0.0" in out


def test_outdated_lines_up_every_status_under_its_header(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    # The longest status is a tarball's, `local file: not checked`: its SOURCE still starts
    # where the header's does, as for the others.
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    local = write_plugin(tmp_path / "dist", "local", "1.0.0")
    assert nexo("plugin", "install", str(local), "--yes", in_process=True)[0] == 0
    code, out, err = nexo("plugin", "outdated", in_process=True)
    assert code == 0, err
    header, *rows = out.splitlines()
    column = header.index("SOURCE")
    assert {row.split()[0]: row[column - 1 :] for row in rows} == {
        "hello": " acme/hello",
        "local": " local file",
    }
    assert "local file: not checked" in out


@pytest.mark.parametrize(
    ("installed", "latest", "status"),
    [
        # The daemon's `semver` crate orders build metadata (semver 1.0.28 src/impls.rs).
        ("1.0.0", "1.0.0+b1", "outdated"),
        ("1.0.0+b1", "1.0.0+b2", "outdated"),
        ("1.0.0+b2", "1.0.0+b1", "ahead"),
        ("1.0.0+b2", "1.0.0+b2", "current"),
    ],
)
def test_outdated_orders_build_metadata_as_the_daemon(
    home: Path, server: GitHubServer, installed: str, latest: str, status: str
) -> None:
    server.publish("acme", "hello", f"v{installed}", release_assets("hello", installed))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", f"v{latest}", release_assets("hello", latest))
    code, out, err = nexo("plugin", "outdated", "--json", in_process=True)
    assert code == 0, err
    [entry] = json.loads(out)["plugins"]
    assert (entry["installed"], entry["latest"], entry["status"]) == (installed, latest, status)


def test_outdated_unreachable_source_goes_on(home: Path, server: GitHubServer) -> None:
    for plugin_id in ("hello", "world"):
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
    server.fail(status=500, times=None, path_contains="/repos/acme/hello/")
    code, out, _ = nexo("plugin", "outdated", "--json", in_process=True)
    assert code == 1
    by_id = {entry["id"]: entry for entry in json.loads(out)["plugins"]}
    assert by_id["hello"]["status"] == "failed"
    assert by_id["hello"]["error"]["kind"] == "network"
    assert by_id["world"]["status"] == "current"


def test_a_plugin_outdated_and_upgrade_all_fail_on_is_one_error_line_with_its_kind(
    home: Path, server: GitHubServer
) -> None:
    """A plugin `outdated` could not check and one `upgrade --all` could not upgrade each get
    the `error:` line every failure has, shaped as `sync` says one: `error: ID: MESSAGE
    [KIND]`, with --quiet and --json too (beside the one document)."""
    for plugin_id in ("hello", "world"):
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0
    server.fail(status=500, times=None, path_contains="/repos/acme/hello/")
    for command in (["outdated"], ["upgrade", "--all", "--yes"]):
        for extra in ([], ["-q"], ["--json"]):
            code, out, err = nexo("plugin", *command, *extra, in_process=True)
            assert code == 1, err
            errors = [line for line in err.splitlines() if line.startswith("error:")]
            assert len(errors) == 1, (command, extra, err)
            assert errors[0].startswith("error: hello: latest release of acme/hello: HTTP 500")
            assert errors[0].endswith(" [network]"), errors[0]
            assert "error: world" not in err
            if extra == ["--json"]:
                document = json.loads(out)
                assert document["ok"] is False
                [failed] = [entry for entry in document["plugins"] if entry["id"] == "hello"]
                # outdated nests the failure document under `error`; upgrade --all lists it.
                reported = failed["error"] if command == ["outdated"] else failed
                assert reported["kind"] == "network"


def test_outdated_unknown_id(home: Path, server: GitHubServer) -> None:
    code, out, err = nexo("plugin", "outdated", "ghost", "--json", in_process=True)
    assert code == 1
    assert json.loads(out)["kind"] == "not_installed"
    assert "Traceback" not in err
    assert server.requests == []


def _rolled_back_to_the_first_release(server: GitHubServer) -> None:
    """hello 1.0.0 installed from a release, upgraded to 2.0.0, then rolled back: the
    rollback holds it at 1.0.0."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", in_process=True)[0] == 0
    assert nexo("plugin", "rollback", "hello", "--yes", in_process=True)[0] == 0


def _installed(home: Path) -> dict[str, list[tuple[str, bool]]]:
    code, out, _ = nexo("plugin", "list", "--json", in_process=True)
    assert code == 0
    found: dict[str, list[tuple[str, bool]]] = {}
    for plugin in json.loads(out)["plugins"]:
        found.setdefault(plugin["id"], []).append((plugin["version"], plugin["kept"]))
    return {key: sorted(value) for key, value in found.items()}


def test_rollback_swaps_then_holds_and_never_rolls_forward(
    home: Path, server: GitHubServer
) -> None:
    """After ``rollback`` the plugin stays on the version put back: ``upgrade``, ``upgrade
    --all`` leave it (``list`` and ``outdated`` say held), a second rollback goes back, never
    forward, and naming a version (``upgrade ID@TAG``) moves it and ends the hold."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", "--keep-old", in_process=True)[0] == 0
    assert _installed(home) == {"hello": [("1.0.0", True), ("2.0.0", False)]}
    server.requests.clear()

    code, out, err = nexo("plugin", "rollback", "hello", "--yes", "--json", in_process=True)
    assert code == 0, err
    document = json.loads(out)
    assert (document["from_version"], document["version"]) == ("2.0.0", "1.0.0")
    assert document["path"] == str(home / "state/plugins/hello-1.0.0")
    assert document["held"] is True
    assert _installed(home) == {"hello": [("1.0.0", False), ("2.0.0", True)]}
    assert server.requests == []  # offline
    code, out, _ = nexo("plugin", "verify", "--json", in_process=True)
    assert code == 0, out

    # A second rollback goes back, never forward: nothing earlier than 1.0.0 is kept.
    before = tree_snapshot(home / "state/plugins")
    code, out, err = nexo("plugin", "rollback", "hello", "--json", in_process=True)
    assert (code, json.loads(out)["kind"]) == (1, "not_installed")
    assert "no earlier version of 'hello' is kept" in json.loads(out)["error"]
    assert "kept too: 2.0.0, rolled back from" in json.loads(out)["error"]
    assert tree_snapshot(home / "state/plugins") == before

    # Held: upgrade and upgrade --all leave it, without a request, and say so.
    code, out, err = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert code == 0, err
    assert (json.loads(out)["held"], json.loads(out)["version"]) == ("1.0.0", "1.0.0")
    code, _, err = nexo("plugin", "upgrade", "--all", "--yes", in_process=True)
    assert code == 0, err
    assert "hello is held at 1.0.0: `nexo plugin upgrade hello@TAG` names a version" in err
    assert server.requests == []
    assert tree_snapshot(home / "state/plugins") == before
    (listed,) = [p for p in nexo("plugin", "list", "--json", in_process=True).document["plugins"]
                 if not p["kept"]]  # fmt: skip
    assert (listed["version"], listed["held"]) == ("1.0.0", True)
    text = nexo("plugin", "list", in_process=True).stdout
    (row,) = [line for line in text.splitlines() if "1.0.0" in line]
    assert row.split()[3:5] == ["unsigned", "enabled,held"]
    code, out, _ = nexo("plugin", "outdated", "--exit-code", "--json", in_process=True)
    assert code == 0  # held is not outdated: upgrade would not move it
    (entry,) = json.loads(out)["plugins"]
    assert (entry["status"], entry["latest"]) == ("held", "2.0.0")

    # Naming a version moves it, and ends the hold.
    code, out, err = nexo("plugin", "upgrade", "hello@v2.0.0", "--json", in_process=True)
    assert code == 0, err
    assert json.loads(out)["version"] == "2.0.0"
    assert "held" not in json.loads(out)
    assert nexo("plugin", "list", "--json", in_process=True).document["plugins"][0]["held"] is False


def test_an_install_after_a_rollback_keeps_the_version_it_replaces(
    home: Path, server: GitHubServer
) -> None:
    """An install of the release a rollback left ends the hold and replaces the version put
    back, which it keeps for rollback as upgrade would (one per plugin): the copy of that
    release the rollback kept, the very artifact now installed, goes. A rollback then goes
    back to the version the install replaced."""
    _rolled_back_to_the_first_release(server)
    code, _, err = nexo("plugin", "install", "acme/hello", "--yes", in_process=True)
    assert code == 0, err
    assert _installed(home) == {"hello": [("1.0.0", True), ("2.0.0", False)]}
    (listed,) = [p for p in nexo("plugin", "list", "--json", in_process=True).document["plugins"]
                 if not p["kept"]]  # fmt: skip
    assert (listed["version"], listed["held"]) == ("2.0.0", False)
    code, out, _ = nexo("plugin", "rollback", "hello", "--yes", "--json", in_process=True)
    assert code == 0, out
    assert _installed(home) == {"hello": [("1.0.0", False), ("2.0.0", True)]}


def test_an_install_without_a_tag_ends_a_hold_as_the_help_says(
    home: Path, server: GitHubServer
) -> None:
    """A rollback holds the plugin; ``upgrade`` leaves it, but an ``install`` of it names a
    version, with or without a tag: ``install owner/repo`` puts the latest release in place
    and ends the hold, as the help of install, rollback and hold and docs/install.md say.
    An install that finds the held version in place (``already_installed``) keeps it."""
    for command in ("install", "rollback", "hold"):
        shown = nexo("plugin", command, "--help", in_process=True).stdout
        assert "with or without a tag" in " ".join(shown.split()), command
        assert "`install owner/repo` installs the latest release" in " ".join(shown.split())
    _rolled_back_to_the_first_release(server)
    holds = home / "state/plugins/.nexo/holds"
    assert sorted(path.name for path in holds.iterdir()) == ["hello.json"]

    def held() -> tuple[str, bool]:
        (listed,) = [p for p in nexo("plugin", "list", "--json", in_process=True).document[
            "plugins"] if not p["kept"]]  # fmt: skip
        return listed["version"], listed["held"]

    code, out, err = nexo("plugin", "install", "acme/hello@v1.0.0", "--yes", "--json",
                          in_process=True)  # fmt: skip
    assert code == 0, err
    assert (json.loads(out)["was_already_present"], held()) == (True, ("1.0.0", True))
    code, out, err = nexo("plugin", "install", "acme/hello", "--yes", "--json", in_process=True)
    assert code == 0, err
    assert (json.loads(out)["version"], held()) == ("2.0.0", ("2.0.0", False))
    assert not holds.exists() or list(holds.iterdir()) == []


@pytest.mark.parametrize("how", ["install", "upgrade"])
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_an_install_or_upgrade_that_ends_a_hold_says_so_as_sync_does(
    home: Path, server: GitHubServer, how: str, as_json: bool
) -> None:
    """``install owner/repo`` and ``upgrade ID@TAG`` end a rollback's hold: each says so, as
    ``sync`` does (a ``note:`` line on stderr naming the hold's version and the one named;
    ``released_hold`` in ``--json``). A run that ends no hold says nothing of one."""
    _rolled_back_to_the_first_release(server)
    root = home / "state/plugins"
    holds = root / ".nexo/holds"
    assert sorted(path.name for path in holds.iterdir()) == ["hello.json"]
    args = ("install", "acme/hello") if how == "install" else ("upgrade", "hello@v2.0.0")
    flags = ("--yes", "--json") if as_json else ("--yes",)
    code, out, err = nexo("plugin", *args, *flags, in_process=True)
    assert code == 0, err
    note = f"note: hold at 1.0.0 released (the {how} names 2.0.0)"
    if as_json:
        document = json.loads(out)
        assert (document["version"], document["released_hold"]) == ("2.0.0", "1.0.0")
    else:
        assert err.splitlines().count(note) == 1, err
        # Said once: never a second time in another command's words.
        assert err.count("hold at 1.0.0 released") == 1, err
    assert list(holds.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == [".nexo", ".nexo-install.lock", "hello-2.0.0"]
    # No hold left to end: nothing said of one.
    server.publish("acme", "hello", "v3.0.0", release_assets("hello", "3.0.0"))
    args = ("install", "acme/hello") if how == "install" else ("upgrade", "hello@v3.0.0")
    code, out, err = nexo("plugin", *args, *flags, in_process=True)
    assert code == 0, err
    assert "hold" not in err
    if as_json:
        assert "released_hold" not in json.loads(out)


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_an_upgrade_naming_the_version_held_keeps_the_hold_and_says_so(
    home: Path, server: GitHubServer, as_json: bool
) -> None:
    """``upgrade ID@TAG`` naming the version a rollback holds (the one installed) changes
    nothing, the hold included, as an install that finds that version in place keeps it;
    it says the plugin stays held rather than only "up to date" (``held`` in ``--json``)."""
    _rolled_back_to_the_first_release(server)
    root = home / "state/plugins"
    before = tree_snapshot(root)
    flags = ("--yes", "--json") if as_json else ("--yes",)
    code, out, err = nexo("plugin", "upgrade", "hello@v1.0.0", *flags, in_process=True)
    assert code == 0, err
    if as_json:
        document = json.loads(out)
        assert (document["version"], document["upgraded"], document["held"]) == (
            "1.0.0", False, "1.0.0"
        )  # fmt: skip
        assert "released_hold" not in document
    else:
        assert err.splitlines() == [
            "hello 1.0.0 is up to date; it stays held at 1.0.0, as the version named is the one"
            " installed (`nexo plugin unhold hello` releases the hold)."
        ]
    assert tree_snapshot(root) == before
    assert [path.name for path in (root / ".nexo/holds").iterdir()] == ["hello.json"]
    # Naming the other version ends it, as before.
    code, out, err = nexo("plugin", "upgrade", "hello@v2.0.0", *flags, in_process=True)
    assert code == 0, err
    assert list((root / ".nexo/holds").iterdir()) == []


@pytest.mark.parametrize("squatter", ["file", "directory", "link"])
def test_a_rollback_whose_place_is_taken_changes_nothing(
    home: Path, server: GitHubServer, squatter: str
) -> None:
    """Something that is no install of the plugin sits where the version put back goes
    (``<dest>/hello-1.0.0``): the rollback is refused before anything is written, naming
    it, as ``install`` refuses such a place (``already_installed``); no journal entry or
    empty kept holder is left behind. An empty directory holds nothing and is replaced."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", in_process=True)[0] == 0
    root = home / "state/plugins"
    place = root / "hello-1.0.0"
    if squatter == "file":
        place.write_text("not a plugin\n")
    elif squatter == "directory":
        place.mkdir()
        (place / "notes.txt").write_text("mine\n")
    else:
        place.symlink_to(home)
    before = tree_snapshot(root)
    for dry_run in ((), ("--dry-run",)):
        code, out, _ = nexo("plugin", "rollback", "hello", *dry_run, "--json", in_process=True)
        assert (code, json.loads(out)["kind"]) == (1, "already_installed"), out
        assert str(place) in json.loads(out)["error"]
        assert tree_snapshot(root) == before

    if squatter == "directory":
        shutil.rmtree(place)
        place.mkdir()
        code, out, err = nexo("plugin", "rollback", "hello", "--json", in_process=True)
        assert code == 0, err
        assert (place / ".nexo-install.json").is_file()


def test_remove_takes_the_kept_versions_left_alone(home: Path, server: GitHubServer) -> None:
    """The installed version is gone (deleted by hand), the one kept for rollback is not:
    `list` shows it, so `remove` removes it, rather than saying the plugin is not there."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", in_process=True)[0] == 0
    shutil.rmtree(home / "state/plugins/hello-2.0.0")
    assert _installed(home) == {"hello": [("1.0.0", True)]}
    (kept,) = [p["path"] for p in nexo("plugin", "list", "--json", in_process=True).document[
        "plugins"]]  # fmt: skip
    code, out, err = nexo("plugin", "remove", "hello", "--yes", "--json", in_process=True)
    assert code == 0, err
    assert json.loads(out)["removed"] == [kept]
    assert _installed(home) == {}
    assert not Path(kept).exists()
    code, out, _ = nexo("plugin", "remove", "hello", "--yes", "--json", in_process=True)
    assert (code, json.loads(out)["kind"]) == (1, "not_installed")


def test_hold_and_unhold_by_hand(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    code, _, err = nexo("plugin", "hold", "hello", in_process=True)
    assert code == 0, err
    assert "hello is held at 1.0.0" in err
    assert "already held" in nexo("plugin", "hold", "hello", in_process=True).stderr
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    server.requests.clear()
    code, out, _ = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert (code, json.loads(out)["held"], server.requests) == (0, "1.0.0", [])
    code, out, _ = nexo("plugin", "unhold", "hello", "--yes", "--json", in_process=True)
    assert (code, json.loads(out)["changed"], json.loads(out)["version"]) == (0, True, "1.0.0")
    assert "was not held" in nexo("plugin", "unhold", "hello", in_process=True).stderr
    code, out, _ = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert (code, json.loads(out)["version"]) == (0, "2.0.0")
    # remove releases a hold: a later install of the id is not held.
    assert nexo("plugin", "hold", "hello", in_process=True).code == 0
    assert nexo("plugin", "remove", "hello", "--yes", in_process=True).code == 0
    assert not list((home / "state/plugins/.nexo/holds").iterdir())
    code, out, _ = nexo("plugin", "hold", "ghost", "--json", in_process=True)
    assert (code, json.loads(out)["kind"]) == (1, "not_installed")
    # An id that is no plugin id never becomes a path: nothing outside the holds is touched.
    outside = home / "state" / "victim.json"
    outside.write_text("{}")
    code, out, _ = nexo("plugin", "unhold", "../../../victim", "--json", in_process=True)
    assert (code, json.loads(out)["kind"]) == (2, "usage")
    assert outside.read_text() == "{}"


def test_a_held_local_file_install_names_the_way_out_that_works(home: Path, tmp_path: Path) -> None:
    """A plugin installed from a tarball has no release to name: its hold points at
    installing another tarball (or unhold), never at `upgrade ID@TAG`, which refuses it."""
    dist = tmp_path / "dist"
    dist.mkdir()
    for name, data in release_assets("hello", "1.0.0").items():
        (dist / name).write_bytes(data)
    tarball = dist / "hello-1.0.0-noarch.tar.gz"
    assert nexo("plugin", "install", str(tarball), "--yes", in_process=True).code == 0
    assert nexo("plugin", "hold", "hello", in_process=True).code == 0
    held = nexo("plugin", "upgrade", "hello", in_process=True)
    assert held.code == 0, held.stderr
    assert "hello is held at 1.0.0" in held.stderr
    assert "upgrade hello@TAG" not in held.stderr
    assert "`nexo plugin install PATH`" in held.stderr
    assert "`nexo plugin unhold hello`" in held.stderr
    # What it names is refused for a local-file install, as the hint must not suggest.
    assert nexo("plugin", "upgrade", "hello@v2.0.0", "--json", in_process=True).code == 1


def test_unhold_of_a_local_file_install_names_install_not_upgrade(
    home: Path, tmp_path: Path
) -> None:
    """`upgrade` skips a plugin installed from a tarball (reason "local"): releasing its hold
    says so and names the install of a new tarball, with the root it is in."""
    dist = tmp_path / "dist"
    dist.mkdir()
    for name, data in release_assets("hello", "1.0.0").items():
        (dist / name).write_bytes(data)
    root = tmp_path / "elsewhere"
    tarball = dist / "hello-1.0.0-noarch.tar.gz"
    where = ("--dest", str(root))
    assert nexo("plugin", "install", str(tarball), *where, "--yes", in_process=True).code == 0
    assert nexo("plugin", "hold", "hello", *where, in_process=True).code == 0
    released = nexo("plugin", "unhold", "hello", *where, in_process=True)
    assert released.code == 0, released.stderr
    assert "follows its source again" not in released.stderr
    assert f"`nexo plugin upgrade hello --dest {root}` does not follow a local tarball" in (
        released.stderr
    )
    assert f"`nexo plugin install PATH --dest {root}`" in released.stderr
    # What it says is so: upgrade skips it, a newer tarball installs as named.
    skipped = nexo("plugin", "upgrade", "--all", *where, "--json", in_process=True)
    assert [entry["reason"] for entry in skipped.document["skipped"]] == ["local"]
    newer = write_plugin(tmp_path / "newer", "hello", "1.1.0")
    assert nexo("plugin", "install", str(newer), *where, "--yes", in_process=True).code == 0


def test_a_mistyped_id_is_not_installed_with_the_closest_ids(
    home: Path, server: GitHubServer
) -> None:
    server.publish("acme", "weather", "v1.0.0", release_assets("weather", "1.0.0"))
    assert nexo("plugin", "install", "acme/weather", in_process=True)[0] == 0
    for command in ("rollback", "disable", "upgrade", "remove", "hold"):
        result = nexo("plugin", command, "wether", "--yes", "--json", in_process=True)
        assert (result.code, result.document["kind"]) == (1, "not_installed"), command
        assert result.document["error"].endswith("Did you mean 'weather'?"), command
        assert result.document["suggestions"] == ["weather"]


@pytest.mark.parametrize(
    "command",
    ["remove", "rollback", "hold", "unhold", "verify", "upgrade", "sbom", "enable", "disable"],
)
@pytest.mark.parametrize(
    ("given", "reason"),
    [("../x", "character `.` is not allowed"), ("Weather", "uppercase letters are not allowed")],
)
def test_a_text_that_is_no_plugin_id_is_one_usage_error_for_every_command(
    home: Path, server: GitHubServer, command: str, given: str, reason: str
) -> None:
    """Every command that names an installed plugin refuses a text no plugin id can be (exit
    2, `usage`, saying why), as `enable` always did, rather than looking it up; nothing is
    created or changed."""
    server.publish("acme", "weather", "v1.0.0", release_assets("weather", "1.0.0"))
    assert nexo("plugin", "install", "acme/weather", in_process=True)[0] == 0
    before = tree_snapshot(home)
    args = {"remove": ["--yes", "--json"], "sbom": []}.get(command, ["--json"])
    result = nexo("plugin", command, given, *args, in_process=True)
    if command == "sbom":  # prints the SBOM itself: no --json
        assert (result.code, result.stdout) == (2, "")
        assert reason in result.stderr
    else:
        assert (result.code, result.document["kind"]) == (2, "usage"), result.document
        assert reason in result.document["error"]
    assert tree_snapshot(home) == before


def test_upgrade_keeps_one_previous_version_by_default(home: Path, server: GitHubServer) -> None:
    """Without --keep-old an upgrade keeps the version it replaces for rollback, and only it:
    the version an earlier upgrade kept goes. --no-keep-old keeps nothing new."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    code, out, err = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert code == 0, err
    first = json.loads(out)
    assert (first["removed_old"], first["pruned_kept_paths"]) == (False, [])
    assert _installed(home) == {"hello": [("1.0.0", True), ("2.0.0", False)]}

    server.publish("acme", "hello", "v3.0.0", release_assets("hello", "3.0.0"))
    # A dry run says the same change first, then the screen of what it would install.
    code, _, err = nexo("plugin", "upgrade", "hello", "--dry-run", in_process=True)
    assert code == 0, err
    assert err.index("hello 2.0.0 \u2192 3.0.0") < err.index("Plugin:") < err.index("Dry run")
    code, _, err = nexo("plugin", "upgrade", "hello", in_process=True)
    assert code == 0, err
    assert "Kept 2.0.0 out of the daemon's sight" in err
    # What changes is said before it is done, as `0.1.0 → 0.2.0`.
    assert err.index("hello 2.0.0 \u2192 3.0.0") < err.index("Upgraded hello to 3.0.0")
    assert f"Removed the version kept before it ({first['kept_paths'][0]})" in err
    assert not Path(first["kept_paths"][0]).exists()
    assert _installed(home) == {"hello": [("2.0.0", True), ("3.0.0", False)]}

    code, out, err = nexo("plugin", "rollback", "hello", "--json", in_process=True)
    assert code == 0, err
    assert (json.loads(out)["from_version"], json.loads(out)["version"]) == ("3.0.0", "2.0.0")
    assert _installed(home) == {"hello": [("2.0.0", False), ("3.0.0", True)]}

    server.publish("acme", "hello", "v4.0.0", release_assets("hello", "4.0.0"))
    assert nexo("plugin", "unhold", "hello", in_process=True).code == 0  # the rollback's hold
    code, out, err = nexo("plugin", "upgrade", "hello", "--no-keep-old", "--json", in_process=True)
    assert code == 0, err
    document = json.loads(out)
    assert (document["removed_old"], document["kept_paths"]) == (True, [])
    assert document["pruned_kept_paths"] == []
    # The version rolled back from stays kept: --no-keep-old only deletes what it replaces.
    assert _installed(home) == {"hello": [("3.0.0", True), ("4.0.0", False)]}


def test_upgrade_keep_old_keeps_every_version(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    for version in ("2.0.0", "3.0.0"):
        server.publish("acme", "hello", f"v{version}", release_assets("hello", version))
        code, out, err = nexo("plugin", "upgrade", "hello", "--keep-old", "--json", in_process=True)
        assert code == 0, err
        assert json.loads(out)["pruned_kept_paths"] == []
    assert _installed(home) == {"hello": [("1.0.0", True), ("2.0.0", True), ("3.0.0", False)]}


def test_a_refused_upgrade_keeps_the_kept_version(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v3.0.0", release_assets("hello", "3.0.0", data=b"no tarball"))
    before = tree_snapshot(home / "state/plugins")
    code, out, _ = nexo("plugin", "upgrade", "hello", "--json", in_process=True)
    assert code == 1
    assert json.loads(out)["kind"] == "archive_invalid"
    assert tree_snapshot(home / "state/plugins") == before
    assert _installed(home) == {"hello": [("1.0.0", True), ("2.0.0", False)]}


def test_rollback_refuses_a_changed_kept_tree(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", "--keep-old", in_process=True)[0] == 0
    root = home / "state/plugins"
    kept_manifest = next((root / ".nexo/kept").glob("*/tree/nexo-plugin.toml"))
    kept_manifest.write_text(kept_manifest.read_text() + "\n# changed\n")
    before = tree_snapshot(root)
    code, out, err = nexo("plugin", "rollback", "hello", "--json", in_process=True)
    assert code == 1
    document = json.loads(out)
    assert document["kind"] == "checksum_mismatch"
    assert "nexo-plugin.toml" in document["changed"]
    assert "Traceback" not in err
    assert tree_snapshot(root) == before


def test_rollback_to_a_version_another_tool_installed_says_it_cannot_be_checked(
    home: Path, server: GitHubServer
) -> None:
    """The reference installer's receipt has no file hashes: the kept tree cannot be checked,
    which is said as such (not as a mismatch, nor with advice to reinstall what is kept)."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    receipt = home / "state/plugins/hello-1.0.0/.nexo-install.json"
    document = json.loads(receipt.read_text())
    for key in ("signature", "files", "modes", "resolved_tag"):
        document.pop(key, None)
    receipt.write_text(json.dumps(document))
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", in_process=True)[0] == 0
    root = home / "state/plugins"
    before = tree_snapshot(root)
    code, out, _ = nexo("plugin", "rollback", "hello", "--yes", "--json", in_process=True)
    assert code == 1
    refused = json.loads(out)
    assert refused["kind"] == "checksum_missing"
    assert refused["error"] == (
        "the kept hello 1.0.0 cannot be checked before it comes back: its receipt has no file "
        "hashes (it was installed by another tool); install that version again instead "
        "(`nexo plugin install acme/hello@TAG --allow-downgrade`, TAG the release of 1.0.0); "
        "nothing was changed"
    )
    assert tree_snapshot(root) == before


def test_rollback_to_a_tagged_version_another_tool_installed_names_that_release_and_root(
    home: Path, server: GitHubServer, tmp_path: Path
) -> None:
    """A kept receipt of another tool that records its release's tag: the remedy names that
    very release (no `TAG` to fill in) and the root it lives in (``--dest``, not the
    default), and run as printed it puts that version back."""
    root = tmp_path / "elsewhere"
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    code, _, err = nexo("plugin", "install", "acme/hello@v1.0.0", "--dest", str(root), "--yes",
                        in_process=True)  # fmt: skip
    assert code == 0, err
    receipt = root / "hello-1.0.0/.nexo-install.json"
    document = json.loads(receipt.read_text())
    assert document["tag"] == "v1.0.0"
    for key in ("signature", "files", "modes"):
        document.pop(key, None)
    receipt.write_text(json.dumps(document))
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    # Pinned to its tag: upgraded by naming the next one.
    code, _, err = nexo("plugin", "upgrade", "hello@v2.0.0", "--dest", str(root), "--yes",
                        in_process=True)  # fmt: skip
    assert code == 0, err
    before = tree_snapshot(root)
    code, out, _ = nexo("plugin", "rollback", "hello", "--dest", str(root), "--yes", "--json",
                        in_process=True)  # fmt: skip
    assert code == 1
    refused = json.loads(out)
    assert refused["kind"] == "checksum_missing", refused
    assert tree_snapshot(root) == before
    printed = f"nexo plugin install acme/hello@v1.0.0 --allow-downgrade --dest {root}"
    assert f"(`{printed}`); nothing was changed" in refused["error"], refused["error"]
    code, out, err = nexo(*printed.split()[1:], "--yes", "--json", in_process=True)
    assert code == 0, err
    assert json.loads(out)["version"] == "1.0.0"


def test_rollback_without_a_kept_version(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    before = tree_snapshot(home / "state/plugins")
    code, out, _ = nexo("plugin", "rollback", "hello", "--json", in_process=True)
    assert code == 1
    assert json.loads(out)["kind"] == "not_installed"
    assert tree_snapshot(home / "state/plugins") == before
    code, out, _ = nexo("plugin", "rollback", "hello", "--dry-run", "--json",
                        in_process=True)  # fmt: skip
    assert code == 1


def test_rollback_dry_run_changes_nothing(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    assert nexo("plugin", "upgrade", "hello", "--keep-old", in_process=True)[0] == 0
    before = tree_snapshot(home / "state/plugins")
    code, out, _ = nexo("plugin", "rollback", "hello", "--dry-run", "--json",
                        in_process=True)  # fmt: skip
    assert code == 0
    assert json.loads(out)["dry_run"] is True
    assert json.loads(out)["version"] == "1.0.0"
    assert tree_snapshot(home / "state/plugins") == before


def test_outdated_lists_a_pinned_install_as_pinned(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello@v1.0.0", in_process=True)[0] == 0
    server.publish("acme", "hello", "v2.0.0", release_assets("hello", "2.0.0"))
    code, out, _ = nexo("plugin", "outdated", "--json", "--exit-code", in_process=True)
    assert code == 0  # pinned is not outdated: upgrade would stay on v1.0.0
    (entry,) = json.loads(out)["plugins"]
    assert (entry["status"], entry["latest"]) == ("pinned", "2.0.0")


def test_outdated_sees_every_search_path(home: Path, server: GitHubServer, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{first}', '{second}']\n"
    )
    for plugin_id, root in (("hello", first), ("world", second)):
        server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
        assert nexo("plugin", "install", f"acme/{plugin_id}", "--dest", str(root),
                    in_process=True)[0] == 0  # fmt: skip
    code, out, err = nexo("plugin", "outdated", "--json", "--config", str(config),
                          in_process=True)  # fmt: skip
    assert code == 0, err
    by_id = {entry["id"]: entry for entry in json.loads(out)["plugins"]}
    assert set(by_id) == {"hello", "world"}
    assert by_id["world"]["path"] == str(second / "world-1.0.0")


def _outdated_json(*args: str) -> tuple[int, dict[str, object]]:
    code, out, err = nexo("plugin", "outdated", "--json", *args, in_process=True)
    assert "Traceback" not in err
    return code, json.loads(out)


def _publish_and_install(server: GitHubServer, ids: list[str]) -> None:
    for plugin_id in ids:
        assets = release_assets(plugin_id, "1.0.0")
        server.publish("acme", plugin_id, "v1.0.0", assets, digests=True)
        assert nexo("plugin", "install", f"acme/{plugin_id}", in_process=True)[0] == 0


def test_concurrent_lookups_give_the_sequential_answer(home: Path, server: GitHubServer) -> None:
    """``--jobs`` asks several sources at once; the document (entries, their order, a
    failure marked on its own plugin only) is the one ``--jobs 1`` gives."""
    ids = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    _publish_and_install(server, ids)
    server.publish("acme", "charlie", "v1.1.0", release_assets("charlie", "1.1.0"), digests=True)
    server.fail(status=404, times=None, path_contains="/repos/acme/echo/")
    runs = {jobs: _outdated_json("--jobs", jobs) for jobs in ("1", "3", "8")}
    assert runs["1"] == runs["3"] == runs["8"]
    code, document = runs["8"]
    assert code == 1
    plugins = document["plugins"]
    assert isinstance(plugins, list)
    statuses = {entry["id"]: entry["status"] for entry in plugins}
    assert statuses == {
        "alpha": "current", "bravo": "current", "charlie": "outdated", "delta": "current",
        "echo": "failed", "foxtrot": "current",
    }  # fmt: skip
    texts = [nexo("plugin", "outdated", "--jobs", jobs, in_process=True) for jobs in ("1", "8")]
    assert texts[0] == texts[1]


def test_a_second_run_asks_conditionally(home: Path, server: GitHubServer) -> None:
    """The release documents of a run are kept with their ETags: the next run sends one
    conditional request per plugin, GitHub's 304 answers it, and the answer is the same; a
    release published meanwhile is seen (its document no longer matches)."""
    ids = ["alpha", "bravo", "charlie"]
    _publish_and_install(server, ids)
    _, first = _outdated_json()
    server.requests.clear()
    _, second = _outdated_json()
    assert second == first
    paths = sorted(request.path for request in server.requests)
    assert paths == [f"/repos/acme/{plugin_id}/releases/latest" for plugin_id in ids]
    assert all(request.headers.get("if-none-match") for request in server.requests)
    server.publish("acme", "bravo", "v2.0.0", release_assets("bravo", "2.0.0"), digests=True)
    _, third = _outdated_json()
    plugins = third["plugins"]
    assert isinstance(plugins, list)
    assert {entry["id"]: entry["latest"] for entry in plugins} == {
        "alpha": "1.0.0", "bravo": "2.0.0", "charlie": "1.0.0",
    }  # fmt: skip


def test_a_kept_answer_that_was_tampered_with_is_not_used(home: Path, server: GitHubServer) -> None:
    """A kept answer is used only on the server's 304 to its own ETag: one edited on disk
    (here: its ETag line, so the server no longer recognises it) is asked for again."""
    _publish_and_install(server, ["alpha"])
    _outdated_json()
    answers = sorted((home / "cache" / "blobs" / "answers").iterdir())
    assert answers
    for kept in answers:
        head, _, body = kept.read_bytes().partition(b"\n")
        kept.write_bytes(head.replace(b'"', b"'") + b"\n" + body.replace(b"1.0.0", b"9.9.9"))
    server.requests.clear()
    _, document = _outdated_json()
    plugins = document["plugins"]
    assert isinstance(plugins, list)
    assert plugins[0]["latest"] == "1.0.0"
    assert [r.path for r in server.requests] == ["/repos/acme/alpha/releases/latest"]


def test_a_spent_rate_limit_is_one_line(home: Path, server: GitHubServer) -> None:
    """GitHub's rate-limit answer stops the lookups: nothing more is asked of it, and the
    text says it once, with the reset time, instead of a failure per plugin."""
    ids = ["alpha", "bravo", "charlie", "delta"]
    _publish_and_install(server, ids)
    server.requests.clear()
    server.rate_limit(status=403, reset=1_900_000_000, times=None)
    code, out, err = nexo("plugin", "outdated", "--jobs", "1", in_process=True)
    assert code == 1
    assert len(server.requests) == 1
    lines = [line for line in err.splitlines() if "rate limit" in line]
    assert lines == [
        "error: GitHub API rate limit exceeded (latest release of acme/alpha); "
        "it resets at 2030-03-17T17:46:40Z. Set NEXO_GITHUB_TOKEN, GH_ENTERPRISE_TOKEN, "
        "GITHUB_ENTERPRISE_TOKEN, GITHUB_TOKEN or GH_TOKEN "
        "(or log in with `gh auth login`) to a token for a higher limit (4 plugin(s) not "
        "checked) [rate_limited]"
    ]
    assert out.count("could not check") == 4
    server.requests.clear()
    code, document = _outdated_json()
    assert code == 1
    assert len(server.requests) <= 8  # at most the lookups already under way
    plugins = document["plugins"]
    assert isinstance(plugins, list)
    assert {entry["error"]["kind"] for entry in plugins} == {"rate_limited"}
    assert {entry["error"]["reset_at"] for entry in plugins} == {"2030-03-17T17:46:40Z"}


def test_with_a_token_one_graphql_request_asks_for_every_repository(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token, the latest releases of all repositories come in one GraphQL request
    (the manifest assets, read before, come from the blob cache): the answer is the one the
    REST API gives, and a repository GraphQL does not answer for is asked over REST alone."""
    ids = ["alpha", "bravo", "charlie", "delta"]
    _publish_and_install(server, ids)
    server.publish("acme", "bravo", "v1.2.0", release_assets("bravo", "1.2.0"), digests=True)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    server.requests.clear()
    code, document = _outdated_json()
    assert code == 0
    assert [(r.method, r.path) for r in server.requests if "/download/" not in r.path] == [
        ("POST", "/graphql")
    ]
    assert server.requests[0].headers["authorization"] == "Bearer secret-token"
    # Without GraphQL (the endpoint failing), REST gives the same document.
    server.fail(status=502, times=None, path_contains="/graphql")
    server.requests.clear()
    assert _outdated_json() == (code, document)
    assert sorted(r.path for r in server.requests if r.method == "GET") == [
        f"/repos/acme/{plugin_id}/releases/latest" for plugin_id in ids
    ]
    plugins = document["plugins"]
    assert isinstance(plugins, list)
    assert [(entry["id"], entry["latest"]) for entry in plugins] == [
        ("alpha", "1.0.0"), ("bravo", "1.2.0"), ("charlie", "1.0.0"), ("delta", "1.0.0"),
    ]  # fmt: skip
    # A repository GraphQL does not know (renamed, say) is asked over REST, and only it fails.
    server.clear_faults()
    del server.releases[("acme", "charlie")]
    server.requests.clear()
    code, document = _outdated_json()
    assert code == 1
    # (its release list is asked for too, to tell a missing repository from one whose
    # releases are all prereleases)
    assert [r.path for r in server.requests] == [
        "/graphql",
        "/repos/acme/charlie/releases/latest",
        "/repos/acme/charlie/releases?per_page=100",
    ]
    plugins = document["plugins"]
    assert isinstance(plugins, list)
    assert {entry["id"]: entry["status"] for entry in plugins} == {
        "alpha": "current", "bravo": "outdated", "charlie": "failed", "delta": "current",
    }  # fmt: skip


def test_graphql_is_not_asked_without_a_token(home: Path, server: GitHubServer) -> None:
    _publish_and_install(server, ["alpha", "bravo"])
    server.requests.clear()
    assert _outdated_json()[0] == 0
    assert [r.method for r in server.requests] == ["GET", "GET"]


def test_kept_answers_are_for_outdated_alone_and_only_its_owners(
    home: Path, server: GitHubServer
) -> None:
    """Only ``outdated``, which installs nothing, asks with a kept answer's ETag: ``upgrade``
    reads every release afresh. An entry others may write is not used."""
    _publish_and_install(server, ["alpha"])
    _outdated_json()
    server.requests.clear()
    assert nexo("plugin", "upgrade", "alpha", "--json", in_process=True)[0] == 0
    assert server.requests
    assert not any("if-none-match" in r.headers for r in server.requests)
    for kept in (home / "cache" / "blobs" / "answers").iterdir():
        kept.chmod(0o666)
    server.requests.clear()
    _outdated_json()
    assert [r.path for r in server.requests] == ["/repos/acme/alpha/releases/latest"]
    assert "if-none-match" not in server.requests[0].headers


def test_a_manifest_asset_lying_about_the_version_is_never_offered(
    home: Path, server: GitHubServer
) -> None:
    """The latest release's manifest asset says 9.9.9, the release ships 2.0.0: `outdated`
    reports the version its one tarball name carries (it reads no manifest asset for a
    release whose names settle it); `info` and `upgrade`, which read the manifest asset,
    refuse the release by name. None offers or installs a version no tarball carries."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    lying = release_assets("hello", "2.0.0")
    lying["nexo-plugin.toml"] = manifest_text("hello", "9.9.9").encode()
    server.publish("acme", "hello", "v2.0.0", lying)
    dest = home / "state" / "plugins"
    before = tree_snapshot(dest)

    code, out, _ = nexo("plugin", "outdated", "--json", in_process=True)
    assert code == 0, out
    (entry,) = json.loads(out)["plugins"]
    assert (entry["status"], entry["latest"]) == ("outdated", "2.0.0")
    for command in (("info", "acme/hello"), ("upgrade", "hello", "--yes")):
        code, out, _ = nexo("plugin", *command, "--json", in_process=True)
        assert code == 1, (command, out)
        document = json.loads(out)
        assert document["kind"] == "asset_not_found", (command, document)
        assert "9.9.9" in document["error"], command
    assert tree_snapshot(dest) == before


def test_upgrade_all_asks_a_spent_service_nothing_more(home: Path, server: GitHubServer) -> None:
    """``upgrade --all`` meets GitHub's rate-limit answer on its first lookup: no plugin's
    upgrade asks GitHub again (each fails with that answer), and nothing is changed."""
    ids = ["alpha", "bravo", "charlie", "delta"]
    _publish_and_install(server, ids)
    root = home / "state" / "plugins"
    before = tree_snapshot(root)
    server.requests.clear()
    server.rate_limit(status=403, reset=1_900_000_000, times=None)
    result = nexo("plugin", "upgrade", "--all", "--jobs", "1", "--yes", "--json", in_process=True)
    assert result.code == 1, result.stderr
    assert len(server.requests) == 1
    plugins = result.document["plugins"]
    assert isinstance(plugins, list)
    assert sorted(entry["id"] for entry in plugins) == ids
    assert {entry["kind"] for entry in plugins} == {"rate_limited"}
    assert tree_snapshot(root) == before


@pytest.mark.parametrize(
    "tag",
    ["../v1.0.0", "v1//0", "\uff561.0.0", "\x1b[31mv1", "x" * 5000],
    ids=["dot-dot", "slash", "full-width", "escape-sequence", "very-long"],
)
def test_an_upgrade_naming_a_hostile_tag_of_a_held_plugin_changes_nothing(
    home: Path, server: GitHubServer, tag: str
) -> None:
    """``upgrade ID@TAG`` of a held plugin with a tag no release can have is the usage error
    ``source_invalid`` in one line (the document under ``--json``), before anything is asked
    or written: the hold and the tree stay as they were."""
    _rolled_back_to_the_first_release(server)
    root = home / "state/plugins"
    before = tree_snapshot(root)
    asked = len(server.requests)
    code, out, err = nexo("plugin", "upgrade", f"hello@{tag}", "--yes", "--json")
    assert code == 2
    document = json.loads(out)
    assert (document["ok"], document["kind"]) == (False, "source_invalid")
    [line] = err.splitlines()
    assert line.startswith("error: invalid source 'acme/hello@")
    assert not any(char < " " for char in line)
    assert len(server.requests) == asked
    assert tree_snapshot(root) == before
    assert [path.name for path in (root / ".nexo/holds").iterdir()] == ["hello.json"]
