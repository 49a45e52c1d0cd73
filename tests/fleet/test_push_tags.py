"""The tags ``push`` and ``mirror`` give a version: an OCI tag, which cannot hold SemVer's
`+`, and never a version tag naming another version."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from support.cli import CliResult, nexo
from support.registry import Registry, start_registry

from .conftest import LINUX, MakeDist, push_dist


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
    pushed = nexo(
        "plugin", "push", str(dist), registry.ref("plugins/echo"), "--plain-http", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
    assert pushed.code == 0, pushed.stderr
    assert pushed.document["reference"] == registry.ref("plugins/echo:1.2.3-rc.1")
    with urllib.request.urlopen(f"http://{registry.host}/v2/plugins/echo/tags/list") as answer:
        tags = json.load(answer)["tags"]
    assert [tag for tag in tags if not tag.startswith("sha256-")] == ["1.2.3-rc.1"]
    installed = nexo(
        "plugin", "install", registry.ref("plugins/echo:1.2.3-rc.1"), "--dest",
        str(tmp_path / "root"), "--plain-http", "--trusted-keys", str(policy),
        "--require-signature", "--target", LINUX, "--yes", "--json",
        env=fleet_env, in_process=True,
    )  # fmt: skip
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
