"""The tag ``push`` gives a version by default: an OCI tag, which cannot hold SemVer's `+`."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist


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
