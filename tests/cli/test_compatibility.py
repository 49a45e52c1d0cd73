"""``install``/``upgrade`` against the daemon version: a plugin whose ``min_nexo_version``
excludes it is ``incompatible`` (exit 1), decided from the release's manifest asset before
any tarball is downloaded; ``install --force`` overrides. The daemon refuses such a plugin at
boot (its manifest crate's ``min_nexo_version`` check; ``lint`` reports it as NX105)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import (
    asset_name,
    manifest_text,
    plugin_tarball,
    release_assets,
    tree_snapshot,
    write_plugin,
)

FUTURE = manifest_text("hello", "2.0.0").replace(">=0.1.0", ">=9.0")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    return use_stand_in(monkeypatch, tmp_path, server)


def _future_release(server: GitHubServer) -> None:
    data = plugin_tarball("hello", "2.0.0", manifest=FUTURE)
    assets = release_assets("hello", "2.0.0", data=data)
    assets["nexo-plugin.toml"] = FUTURE.encode()
    server.publish("acme", "hello", "v2.0.0", assets)


def _tarball_fetched(server: GitHubServer) -> bool:
    name = asset_name("hello", "2.0.0")
    return any(
        request.path.endswith(f"/assets/{asset_id}") or request.path.endswith(name)
        for asset_id, (_, asset) in server.assets.items()
        if asset.name == name
        for request in server.requests
    )


def test_incompatible_release_is_refused_before_download(home: Path, server: GitHubServer) -> None:
    _future_release(server)
    code, out, err = nexo("plugin", "install", "acme/hello", "--nexo-version", "0.2.1", "--json",
                          in_process=True)  # fmt: skip
    assert code == 1, err
    document = json.loads(out)
    assert document["kind"] == "incompatible"
    assert document["min_nexo_version"] == ">=9.0"
    assert document["nexo_version_source"] == "--nexo-version"
    assert "0.2.1" in document["error"]
    assert not _tarball_fetched(server)
    assert tree_snapshot(home / "state" / "plugins") == {}

    code, out, err = nexo("plugin", "install", "acme/hello", "--nexo-version", "0.2.1", "--force",
                          in_process=True)  # fmt: skip
    assert code == 0, err
    assert (home / "state" / "plugins" / "hello-2.0.0").is_dir()
    assert _tarball_fetched(server)  # what the refusal above did not do


def test_the_environment_names_the_daemon(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    _future_release(server)
    monkeypatch.setenv("NEXO_DAEMON_VERSION", "0.2.1")
    code, out, _ = nexo("plugin", "install", "acme/hello", "--json", in_process=True)
    assert code == 1
    assert json.loads(out)["nexo_version_source"] == "NEXO_DAEMON_VERSION"
    monkeypatch.setenv("NEXO_DAEMON_VERSION", "9.1.0")
    code, out, err = nexo("plugin", "install", "acme/hello", "--json", in_process=True)
    assert code == 0, err


def test_without_a_daemon_version_nothing_is_compared(home: Path, server: GitHubServer) -> None:
    _future_release(server)
    code, _, err = nexo("plugin", "install", "acme/hello", in_process=True)
    assert code == 0, err


def test_a_local_tarball_is_checked_from_its_own_manifest(home: Path, tmp_path: Path) -> None:
    data = plugin_tarball("hello", "2.0.0", manifest=FUTURE)
    tarball = write_plugin(tmp_path / "dist", "hello", "2.0.0", data=data)
    code, out, _ = nexo("plugin", "install", str(tarball), "--nexo-version", "0.2.1", "--yes",
                        "--json", in_process=True)  # fmt: skip
    assert code == 1
    assert json.loads(out)["kind"] == "incompatible"
    root = home / "state" / "plugins"
    assert not root.exists() or [p.name for p in root.iterdir()] == []


def test_upgrade_to_an_incompatible_release_is_refused(home: Path, server: GitHubServer) -> None:
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    _future_release(server)
    before = tree_snapshot(home / "state" / "plugins")
    code, out, _ = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", "--json",
                        in_process=True)  # fmt: skip
    assert code == 1
    assert json.loads(out)["kind"] == "incompatible"
    assert tree_snapshot(home / "state" / "plugins") == before


def test_a_daemon_version_that_is_no_version_is_a_usage_error(home: Path) -> None:
    code, out, _ = nexo("plugin", "install", "acme/hello", "--nexo-version", "soon", "--json",
                        in_process=True)  # fmt: skip
    assert code == 2
    assert json.loads(out)["kind"] == "usage"


@pytest.mark.parametrize("version", ["v0.2.1", "V0.2.1", " 0.2.1", "0.2.1\n", "0.02.1"])
@pytest.mark.parametrize(
    "command",
    [
        ("install", "acme/hello"),
        ("upgrade", "hello"),
        ("outdated",),
        ("doctor", "--no-check"),
        ("lint", "."),
        ("check", "hello"),
    ],
)
def test_a_daemon_version_is_read_as_semver_reads_it_by_every_command(
    home: Path, server: GitHubServer, command: tuple[str, ...], version: str
) -> None:
    """The daemon's version is a ``semver::Version``: a ``v`` prefix, surrounding whitespace
    or a leading zero make ``--nexo-version`` a usage error (exit 2) in every command that
    takes it, as ``lint`` and ``check`` already refused them; nothing is installed."""
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    before = tree_snapshot(home / "state" / "plugins")
    code, _, err = nexo("plugin", *command, "--nexo-version", version, in_process=True)
    assert code == 2, err
    assert f"--nexo-version {version!r} is not a" in err
    assert tree_snapshot(home / "state" / "plugins") == before


@pytest.mark.parametrize("version", ["v0.2.1", " 0.2.1"])
def test_the_environments_daemon_version_is_read_as_semver_reads_it(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    _future_release(server)
    monkeypatch.setenv("NEXO_DAEMON_VERSION", version)
    code, out, _ = nexo("plugin", "install", "acme/hello", "--json", in_process=True)
    assert code == 2
    document = json.loads(out)
    assert document["kind"] == "usage"
    assert f"NEXO_DAEMON_VERSION {version!r} is not a version" in document["error"]
    assert tree_snapshot(home / "state" / "plugins") == {}


def _release(
    server: GitHubServer, tag: str, version: str, requirement: str, *, latest: bool
) -> None:
    """Publish ``tag`` carrying hello ``version`` that needs a daemon matching ``requirement``."""
    text = manifest_text("hello", version).replace(">=0.1.0", requirement)
    assets = release_assets("hello", version, data=plugin_tarball("hello", version, manifest=text))
    assets["nexo-plugin.toml"] = text.encode()
    server.publish("acme", "hello", tag, assets, latest=latest)


def _tarballs_fetched(server: GitHubServer) -> set[str]:
    """Names of the tarballs any request fetched (through the API or the download URL)."""
    fetched = set()
    for asset_id, (_, asset) in server.assets.items():
        if not asset.name.endswith(".tar.gz"):
            continue
        for request in server.requests:
            if request.path.endswith(f"/assets/{asset_id}") or request.path.endswith(asset.name):
                fetched.add(asset.name)
    return fetched


def test_without_a_tag_the_newest_compatible_release_is_installed(
    home: Path, server: GitHubServer
) -> None:
    """The latest release needs daemon 9; the newest older one a 0.2.1 daemon can load is
    v1.1.0 (a compatible pre-release after it is passed over): it is installed, chosen from
    manifest assets alone — no tarball of v2.0.0, v1.0.0 or the pre-release is fetched."""
    _release(server, "v1.0.0", "1.0.0", ">=0.1.0", latest=False)
    _release(server, "v1.1.0", "1.1.0", ">=0.2.0", latest=False)
    _release(server, "v1.2.0", "1.2.0", ">=0.3.0", latest=False)
    _release(server, "v2.0.0-rc.1", "2.0.0-rc.1", ">=0.1.0", latest=False)
    _release(server, "v2.0.0", "2.0.0", ">=9.0", latest=True)
    code, out, err = nexo("plugin", "install", "acme/hello", "--nexo-version", "0.2.1", "--json",
                          in_process=True)  # fmt: skip
    assert code == 0, err
    document = json.loads(out)
    assert (document["id"], document["version"]) == ("hello", "1.1.0")
    assert "installing v1.1.0, the newest release compatible with it" in err
    assert _tarballs_fetched(server) == {asset_name("hello", "1.1.0")}
    root = home / "state" / "plugins"
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["hello-1.1.0"]
    receipt = json.loads((root / "hello-1.1.0" / ".nexo-install.json").read_text())
    assert receipt["tag"] == "latest"  # asked for the latest: upgrade follows it


@pytest.mark.parametrize(
    ("older_needs", "source"),
    [(">=0.1.0", "acme/hello@v2.0.0"), (">=5.0", "acme/hello")],
    ids=["an explicit tag", "no compatible release"],
)
def test_the_latest_is_refused_unfetched_when_asked_for_or_nothing_else_fits(
    home: Path, server: GitHubServer, older_needs: str, source: str
) -> None:
    """An explicit tag is what the user wants, compatible or not; without one, when no older
    release admits the daemon either, the refusal names the latest release's requirement.
    Either way no tarball was fetched, and ``--force`` then installs the latest."""
    _release(server, "v1.0.0", "1.0.0", older_needs, latest=False)
    _release(server, "v2.0.0", "2.0.0", ">=9.0", latest=True)
    code, out, _ = nexo("plugin", "install", source, "--nexo-version", "0.2.1", "--json",
                        in_process=True)  # fmt: skip
    assert code == 1
    document = json.loads(out)
    assert (document["kind"], document["min_nexo_version"]) == ("incompatible", ">=9.0")
    assert _tarballs_fetched(server) == set()
    assert tree_snapshot(home / "state" / "plugins") == {}
    code, out, err = nexo("plugin", "install", source, "--nexo-version", "0.2.1", "--force",
                          "--json", in_process=True)  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["version"] == "2.0.0"


def test_upgrade_moves_to_the_newest_release_the_daemon_admits(
    home: Path, server: GitHubServer
) -> None:
    """The latest release needs daemon 9; v1.1.0, newer than the installed v1.0.0, admits a
    0.2.1 daemon: the upgrade installs it, chosen from manifest assets — the latest's tarball
    is never fetched — and the receipt still follows the latest release."""
    _release(server, "v1.0.0", "1.0.0", ">=0.1.0", latest=True)
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    _release(server, "v1.1.0", "1.1.0", ">=0.2.0", latest=False)
    _release(server, "v2.0.0", "2.0.0", ">=9.0", latest=True)
    server.requests.clear()
    code, out, err = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", "--json",
                          in_process=True)  # fmt: skip
    assert code == 0, err
    assert "installing v1.1.0, the newest release compatible with it" in err
    assert _tarballs_fetched(server) == {asset_name("hello", "1.1.0")}
    root = home / "state" / "plugins"
    assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".")) == ["hello-1.1.0"]
    receipt = json.loads((root / "hello-1.1.0" / ".nexo-install.json").read_text())
    assert receipt["tag"] == "latest"
    assert json.loads(out)["ok"] is True


@pytest.mark.parametrize(
    ("source", "locked"),
    [("acme/hello", "acme/hello@v1.1.0"), ("acme/hello@v2.0.0", None)],
    ids=["newest-compatible", "explicit-incompatible-tag"],
)
def test_lock_chooses_the_newest_release_the_daemon_admits(
    home: Path, server: GitHubServer, tmp_path: Path, source: str, locked: str | None
) -> None:
    """``lock --nexo-version``: without a tag, the newest release whose manifest asset admits
    the daemon is locked and the latest's tarball is never fetched; an explicit tag that
    excludes it is ``incompatible`` and no lock is written."""
    _release(server, "v1.0.0", "1.0.0", ">=0.1.0", latest=False)
    _release(server, "v1.1.0", "1.1.0", ">=0.2.0", latest=False)
    _release(server, "v2.0.0", "2.0.0", ">=9.0", latest=True)
    wanted = tmp_path / "fleet" / "nexo-plugins.toml"
    wanted.parent.mkdir()
    wanted.write_text(f'[plugins.hello]\nsource = "{source}"\n', encoding="utf-8")
    result = nexo("plugin", "lock", "-f", str(wanted), "--nexo-version", "0.2.1", "--json",
                  in_process=True)  # fmt: skip
    lock_file = wanted.with_name("nexo-plugins.lock")
    assert asset_name("hello", "2.0.0") not in _tarballs_fetched(server)
    if locked is None:
        assert result.code == 1, result.stderr
        assert (result.document["kind"], result.document["min_nexo_version"]) == (
            "incompatible",
            ">=9.0",
        )
        assert "lock a release it admits" in result.document["error"]
        assert not lock_file.exists()
        return
    assert result.code == 0, result.stderr
    assert f'resolved = "{locked}"' in lock_file.read_text(encoding="utf-8")
    assert "locking v1.1.0, the newest release compatible with it" in result.stderr


@pytest.mark.parametrize("command", ["lock", "sync"])
def test_lock_and_sync_refuse_a_daemon_version_that_is_no_version(
    home: Path, tmp_path: Path, command: str
) -> None:
    """``--nexo-version soon`` is a usage error (exit 2) before anything is resolved or
    written: no lock file, no install root."""
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    (fleet / "nexo-plugins.toml").write_text('[plugins.hello]\nsource = "acme/hello"\n')
    target = ["-f", str(fleet / "nexo-plugins.toml")] if command == "lock" else [
        "--lock", str(fleet / "nexo-plugins.lock"), "--dest", str(tmp_path / "root")]  # fmt: skip
    result = nexo("plugin", command, *target, "--nexo-version", "soon", "--json",
                  in_process=True)  # fmt: skip
    assert result.code == 2, result.stderr
    assert result.document["kind"] == "usage"
    assert "--nexo-version 'soon' is not a version" in result.document["error"]
    assert sorted(p.name for p in fleet.iterdir()) == ["nexo-plugins.toml"]
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize(
    ("pre_tag", "pre_version"),
    [
        # A release-plz tag and a doubled `v` name a pre-release as plainly as `v2.0.0-rc.1`.
        ("hello-v2.0.0-rc.1", "2.0.0-rc.1"),
        ("vv2.0.0-rc.1", "2.0.0-rc.1"),
        # The tag runs ahead of the manifest (SPEC §5): the manifest's version is the release's.
        ("v2.0.0", "2.0.0-rc.1"),
    ],
)
def test_a_pre_release_is_passed_over_whatever_its_tag_looks_like(
    home: Path, server: GitHubServer, pre_tag: str, pre_version: str
) -> None:
    """Looking past a latest release the daemon cannot load, a pre-release is never the
    release installed, as for a `vX.Y.Z-rc` tag: its version is the manifest's, whatever the
    tag's spelling (a package prefix, a doubled `v`, a tag ahead of its manifest)."""
    _release(server, "v1.0.0", "1.0.0", ">=0.1.0", latest=False)
    _release(server, pre_tag, pre_version, ">=0.1.0", latest=False)
    _release(server, "v3.0.0", "3.0.0", ">=9.0", latest=True)
    code, out, err = nexo("plugin", "install", "acme/hello", "--nexo-version", "0.2.1", "--json",
                          in_process=True)  # fmt: skip
    assert code == 0, err
    assert (json.loads(out)["id"], json.loads(out)["version"]) == ("hello", "1.0.0")
    assert _tarballs_fetched(server) == {asset_name("hello", "1.0.0")}


def _printed_remedy(err: str) -> list[str]:
    """The words of the command an ``incompatible`` refusal tells its reader to run, as a
    POSIX shell reads them, without the leading ``nexo``."""
    command = err.split("install it anyway with `", 1)[1].split("`", 1)[0]
    words = shlex.split(command)
    assert words[:3] == ["nexo", "plugin", "install"], command
    return words[1:]


def test_an_upgrade_with_nothing_newer_compatible_installs_nothing_and_says_so(
    home: Path, server: GitHubServer
) -> None:
    """The installed v1.0.0 is the newest release a 0.2.1 daemon admits: the upgrade is
    refused (incompatible) without claiming to install v1.0.0, and the refusal's remedy,
    run as printed, installs the latest release anyway."""
    _release(server, "v1.0.0", "1.0.0", ">=0.1.0", latest=True)
    assert nexo("plugin", "install", "acme/hello", in_process=True)[0] == 0
    _release(server, "v2.0.0", "2.0.0", ">=9.0", latest=True)
    root = home / "state" / "plugins"
    before = tree_snapshot(root)
    code, out, err = nexo("plugin", "upgrade", "hello", "--nexo-version", "0.2.1", "--json",
                          in_process=True)  # fmt: skip
    assert code == 1
    assert json.loads(out)["kind"] == "incompatible"
    assert "installing v1.0.0" not in err
    assert "newest release compatible" not in err
    assert tree_snapshot(root) == before
    words = _printed_remedy(err)
    assert words == ["plugin", "install", "acme/hello@v2.0.0", "--force"]
    code, out, err = nexo(*words, "--json", in_process=True)
    assert code == 0, err
    assert json.loads(out)["version"] == "2.0.0"


def test_the_remedy_of_an_incompatible_tarball_names_it_and_its_root(
    home: Path, tmp_path: Path
) -> None:
    """A local tarball refused as incompatible into a root given with --dest: the printed
    command names the tarball and the root, and installs it there when run as printed."""
    data = plugin_tarball("hello", "2.0.0", manifest=FUTURE)
    tarball = write_plugin(tmp_path / "my dist", "hello", "2.0.0", data=data)
    dest = tmp_path / "other root"
    code, _, err = nexo("plugin", "install", str(tarball), "--dest", str(dest), "--nexo-version",
                        "0.2.1", "--yes", in_process=True)  # fmt: skip
    assert code == 1
    assert not dest.exists() or list(dest.iterdir()) == []
    words = _printed_remedy(err)
    assert words == ["plugin", "install", str(tarball), "--force", "--dest", str(dest)]
    code, _, err = nexo(*words, "--yes", in_process=True)
    assert code == 0, err
    assert (dest / "hello-2.0.0" / "bin" / "hello").is_file()


def test_the_remedy_of_an_incompatible_release_names_the_api_it_was_read_from(
    home: Path, server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release read through --github-api-url and refused as incompatible: the printed
    command carries the same --github-api-url (without it, the release would be looked for
    on another API) and no registry flag, and installs the release when run as printed."""
    monkeypatch.delenv("NEXO_GITHUB_API_BASE", raising=False)
    _future_release(server)
    code, _, err = nexo("plugin", "install", "acme/hello", "--github-api-url", server.url,
                        "--nexo-version", "0.2.1", "--plain-http", in_process=True)  # fmt: skip
    assert code == 1, err
    assert tree_snapshot(home / "state" / "plugins") == {}
    words = _printed_remedy(err)
    assert words == [
        "plugin", "install", "acme/hello@v2.0.0", "--force", "--github-api-url", server.url
    ]  # fmt: skip
    code, out, err = nexo(*words, "--json", in_process=True)
    assert code == 0, err
    assert json.loads(out)["version"] == "2.0.0"
