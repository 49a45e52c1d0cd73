"""The tags ``push`` and ``mirror`` give a version: an OCI tag, which cannot hold SemVer's
`+`, and never a version tag naming another version."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from support.cli import CliResult, nexo
from support.github_server import GitHubServer, github_server
from support.registry import Registry, start_registry
from support.registry_env import write_wanted
from support.tarballs import release_assets

from .conftest import LINUX, MakeDist, push_cli, push_dist

__all__ = ["github_server"]


def _install_verified(
    registry: Registry, dest: Path, policy: Path, target: str, env: dict[str, str]
) -> CliResult:
    """``plugins/echo:1.2.3-rc.1`` installed for ``target``, its signature required."""
    return nexo(
        "plugin", "install", registry.ref("plugins/echo:1.2.3-rc.1"), "--dest", str(dest),
        "--plain-http", "--trusted-keys", str(policy), "--require-signature", "--target",
        target, "--yes", "--json", env=env, in_process=True,
    )  # fmt: skip


def test_a_version_with_build_metadata_is_pushed_under_its_tag_without_it_and_installs(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """``1.2.3-rc.1+build.5`` is tagged ``1.2.3-rc.1`` (the tag install reads build metadata
    aside), not refused for contradicting itself."""
    version = "1.2.3-rc.1+build.5"
    dist = make_dist(version=version)
    pushed = push_cli(dist, registry, fleet_env)
    assert pushed.code == 0, pushed.stderr
    assert pushed.document["reference"] == registry.ref("plugins/echo:1.2.3-rc.1")
    with urllib.request.urlopen(f"http://{registry.host}/v2/plugins/echo/tags/list") as answer:
        tags = json.load(answer)["tags"]
    assert [tag for tag in tags if not tag.startswith("sha256-")] == ["1.2.3-rc.1"]
    installed = _install_verified(registry, tmp_path / "root", policy, LINUX, fleet_env)
    assert installed.code == 0, installed.stderr
    assert (tmp_path / "root" / f"echo-{version}").is_dir()


def _mirror(source: str, destination: str, env: dict[str, str]) -> CliResult:
    return nexo(
        "plugin", "mirror", source, destination, "--plain-http", "--json", env=env, in_process=True
    )


def test_mirror_refuses_a_destination_version_tag_naming_another_version(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """As ``push`` does: install would refuse ``copy/echo:9.9.9`` holding 1.2.3, so the copy
    is refused before anything is written; a tag that is no version (``stable``) is fine."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    copy = start_registry(tmp_path / "copy-registry")
    try:
        refused = _mirror(
            registry.ref("plugins/echo:1.2.3"), copy.ref("copy/echo:9.9.9"), fleet_env
        )
        assert refused.code == 2, refused.stderr
        assert refused.document["kind"] == "source_invalid"
        assert copy.ref("copy/echo:1.2.3") in refused.document["error"]
        assert copy.requests("(PUT|POST|PATCH)", ".") == 0
        stable = _mirror(
            registry.ref("plugins/echo:1.2.3"), copy.ref("copy/echo:stable"), fleet_env
        )
        assert stable.code == 0, stable.stderr
        assert stable.document["tags"] == ["stable"]
    finally:
        copy.stop()


DARWIN = "aarch64-apple-darwin"


def test_a_prerelease_for_a_three_part_triple_is_pushed_as_that_version_and_target(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """``echo-1.2.3-rc.1-aarch64-apple-darwin.tar.gz`` also splits as version 1.2.3 with the
    "triple" ``rc.1-aarch64-apple-darwin``: that reading published a prerelease as 1.2.3."""
    dist = make_dist(version="1.2.3-rc.1", targets=(DARWIN, "noarch"))
    pushed = push_cli(dist, registry, fleet_env)
    assert pushed.code == 0, pushed.stderr
    assert (pushed.document["version"], pushed.document["targets"]) == (
        "1.2.3-rc.1",
        ["aarch64-apple-darwin", "noarch"],
    )
    installed = _install_verified(registry, tmp_path / "root", policy, DARWIN, fleet_env)
    assert installed.code == 0, installed.stderr
    assert (installed.document["version"], installed.document["target"]) == ("1.2.3-rc.1", DARWIN)
    # The tarball alone, installed from its file, is read the same way.
    local = nexo(
        "plugin", "install", str(dist / f"echo-1.2.3-rc.1-{DARWIN}.tar.gz"), "--dest",
        str(tmp_path / "local"), "--target", DARWIN, "--skip-signature-verify", "--yes", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert local.code == 0, local.stderr
    assert (tmp_path / "local" / "echo-1.2.3-rc.1").is_dir()


def test_mirroring_a_release_twice_gives_one_index_dated_by_the_release(
    fleet_env: dict[str, str], registry: Registry, github_server: GitHubServer
) -> None:
    """The index's created time is the release's ``published_at``, not the clock's: two
    sites mirroring one release hold the same index, and a lock of either records the date
    GitHub gives (receipts the same whichever a host synced from)."""
    release = github_server.publish(
        "acme", "nexo-plugin-echo", "v1.2.3", release_assets("echo", "1.2.3", target=LINUX)
    )
    release.published_at = "2026-03-04T05:06:07Z"
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    digests = []
    for site in ("one", "two"):
        mirrored = nexo(
            "plugin", "mirror", "acme/nexo-plugin-echo@v1.2.3", registry.ref(f"{site}/echo"),
            "--plain-http", "--json", env=env, in_process=True,
        )  # fmt: skip
        assert mirrored.code == 0, mirrored.stderr
        digests.append(mirrored.document["digest"])
    assert digests[0] == digests[1]
    request = urllib.request.Request(
        f"http://{registry.host}/v2/one/echo/manifests/1.2.3",
        headers={"Accept": "application/vnd.oci.image.index.v1+json"},
    )
    with urllib.request.urlopen(request) as answer:
        index = json.load(answer)
    assert index["annotations"]["org.opencontainers.image.created"] == "2026-03-04T05:06:07Z"


def test_a_repository_of_prereleases_only_says_which_tags_it_has(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """No release version is not no version: the refusal names the prerelease tags there
    and how to ask for one, instead of calling the repository empty."""
    push_dist(make_dist(version="1.2.3-rc.1"), registry.ref("plugins/echo"), tmp_path / "home")
    (tmp_path / "fleet").mkdir()
    wanted = write_wanted(
        tmp_path / "fleet" / "nexo-plugins.toml", {"echo": registry.ref("plugins/echo")}
    )
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert locked.code == 1, locked.stderr
    assert locked.document["kind"] == "release_not_found"
    assert "its version tags: 1.2.3-rc.1;" in locked.document["error"]
    assert not (wanted.parent / "nexo-plugins.lock").exists()
