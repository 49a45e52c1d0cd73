"""A signer binds the versions after it whatever source they come from: an upgrade from a
registry, an install of a registry tag over it, and a local tarball installed over it are
refused as a GitHub upgrade is (``signer_changed``, both signers named, the root untouched),
and ``--allow-signer-change`` lets each through. The rule is the install step's, not a
kind's (``tests/trust/test_signer_continuity.py`` holds it for GitHub releases)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry
from support.tarballs import tree_snapshot

from .conftest import ACME_IDENTITY, LINUX, MakeDist, push_dist

OTHER = "https://github.com/acme/other/.github/workflows/release.yml@refs/tags/v1.3.0"


@pytest.fixture
def installed(
    tmp_path: Path,
    registry: Registry,
    make_dist: MakeDist,
    fleet_env: Mapping[str, str],
    policy: Path,
) -> tuple[Path, Path]:
    """echo 1.2.3 installed from the registry, signed by acme's echo workflow, and 1.3.0
    pushed beside it signed by another acme workflow; the 1.3.0 dist directory and the root."""
    home = Path(fleet_env["NEXO_HOME"])
    push_dist(make_dist("echo", "1.2.3"), registry.ref("plugins/echo"), home)
    done = nexo("plugin", "install", registry.ref("plugins/echo"), "--plain-http", "--yes",
                "--json", "--trusted-keys", str(policy),
                env=fleet_env, in_process=True)  # fmt: skip
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["signature"]["identity"] == ACME_IDENTITY
    newer = make_dist("echo", "1.3.0", identity=OTHER)
    push_dist(newer, registry.ref("plugins/echo"), home)
    return newer, home / "state" / "plugins"


@pytest.mark.parametrize("how", ["upgrade", "registry tag", "local tarball"])
def test_a_new_signer_is_refused_from_every_kind_of_source(
    installed: tuple[Path, Path],
    registry: Registry,
    fleet_env: Mapping[str, str],
    policy: Path,
    how: str,
) -> None:
    newer, root = installed
    command = {
        "upgrade": ("upgrade", "echo", "--plain-http"),
        "registry tag": ("install", registry.ref("plugins/echo:1.3.0"), "--plain-http"),
        "local tarball": ("install", str(newer / f"echo-1.3.0-{LINUX}.tar.gz")),
    }[how]
    before = tree_snapshot(root)
    refused = nexo("plugin", *command, "--yes", "--json", "--trusted-keys", str(policy),
                   env=fleet_env, in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signer_changed"
    assert document["installed_signer"]["identity"] == ACME_IDENTITY
    assert document["new_signer"]["identity"] == OTHER
    assert ACME_IDENTITY.split("@refs/")[0] in document["error"]
    assert refused.stderr.rstrip().endswith("[signer_changed]")
    assert "Traceback" not in refused.stderr
    assert tree_snapshot(root) == before

    allowed = nexo("plugin", *command, "--allow-signer-change", "--yes", "--json",
                   "--trusted-keys", str(policy), env=fleet_env, in_process=True)  # fmt: skip
    assert allowed.code == 0, allowed.stderr
    assert json.loads(allowed.stdout)["version"] == "1.3.0"
    assert (root / "echo-1.3.0").is_dir()
