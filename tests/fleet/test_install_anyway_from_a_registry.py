"""The remedy of an ``incompatible`` refusal of a registry version is the ``install --force``
command that installs that very version (its pinned reference) with the flags the registry
was reached with (``--plain-http``), and nothing GitHub's (``--github-api-url``)."""

from __future__ import annotations

import shlex
from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import LINUX, MakeDist, push_dist


def test_the_remedy_of_an_incompatible_registry_version_reaches_it_as_it_was_reached(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    home = Path(fleet_env["NEXO_HOME"])
    reference = registry.ref("plugins/alpha")
    push_dist(make_dist("alpha", "1.0.0", identity=None, targets=(LINUX,)), reference, home)
    root = tmp_path / "root"
    refused = nexo(
        "plugin", "install", f"{reference}:1.0.0", "--plain-http", "--dest", str(root),
        "--nexo-version", "0.0.1", "--github-api-url", "http://127.0.0.1:9/api",
        "--skip-signature-verify", "--yes", "--json", env=fleet_env, in_process=True,
    )  # fmt: skip
    assert refused.code == 1, refused.stderr
    assert refused.document["kind"] == "incompatible"
    assert not root.exists() or list(root.iterdir()) == []
    error = str(refused.document["error"])
    command = error.split("install it anyway with `", 1)[1].split("`", 1)[0]
    words = shlex.split(command)
    pinned = words[3]
    assert pinned.startswith(f"{reference}@sha256:"), command
    assert words == [
        "nexo", "plugin", "install", pinned, "--force", "--plain-http", "--dest", str(root)
    ]  # fmt: skip
    done = nexo(*words[1:], "--skip-signature-verify", "--yes", env=fleet_env, in_process=True)
    assert done.code == 0, done.stderr
    assert (root / "alpha-1.0.0").is_dir()
