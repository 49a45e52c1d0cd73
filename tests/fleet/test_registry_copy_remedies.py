"""A registry copy of a GitHub release (what ``mirror owner/repo@tag oci://…`` makes) records
the release it was copied from, but it came from the registry, and a host that installs
from the registry may not reach GitHub at all: a message naming where such a plugin came
from, or how to install it again, names the registry (its pinned reference), never the
release it was mirrored from."""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.registry import Registry
from support.tarballs import release_assets

from .conftest import LINUX

__all__ = ["github_server"]
RELEASE = "acme/nexo-plugin-echo"


@pytest.fixture
def mirrored(
    fleet_env: dict[str, str], registry: Registry, github_server: GitHubServer
) -> tuple[str, dict[str, str]]:
    """``site/echo`` holding 1.0.0 and 2.0.0, each mirrored from its GitHub release; the
    environment (GitHub's API is the stand-in) and the repository's reference."""
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    repository = registry.ref("site/echo")
    for version in ("1.0.0", "2.0.0"):
        assets = release_assets("echo", version, target=LINUX)
        github_server.publish("acme", "nexo-plugin-echo", f"v{version}", assets)
        done = nexo("plugin", "mirror", f"{RELEASE}@v{version}", repository, "--plain-http",
                    env=env, in_process=True)  # fmt: skip
        assert done.code == 0, done.stderr
    return repository, env


def _install(reference: str, root: Path, env: dict[str, str], *more: str) -> Any:
    return nexo("plugin", "install", reference, "--plain-http", "--dest", str(root),
                "--skip-signature-verify", "--yes", *more, env=env, in_process=True)  # fmt: skip


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(path.relative_to(root)): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
    }


def test_rollback_to_a_kept_registry_copy_without_file_hashes_names_its_reference(
    tmp_path: Path, mirrored: tuple[str, dict[str, str]]
) -> None:
    """The kept version's receipt has no file hashes: rollback cannot check it and says to
    install that version again, with the command that does: the pinned reference it was
    installed from and its root (not ``install acme/nexo-plugin-echo@TAG``)."""
    repository, env = mirrored
    root = tmp_path / "root"
    for version in ("1.0.0", "2.0.0"):
        done = _install(f"{repository}:{version}", root, env)
        assert done.code == 0, done.stderr
    (receipt,) = (root / ".nexo/kept").rglob(".nexo-install.json")
    document = json.loads(receipt.read_text())
    pinned = document["registry"]
    assert (document["owner"], document["repo"], document["tag"]) == (
        "acme", "nexo-plugin-echo", "v1.0.0"
    )  # fmt: skip
    assert pinned.startswith(f"{repository}@sha256:")
    del document["files"]
    receipt.write_text(json.dumps(document))
    before = _snapshot(root)
    refused = nexo("plugin", "rollback", "echo", "--dest", str(root), "--yes", "--json",
                   env=env, in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stderr
    assert refused.document["kind"] == "checksum_missing"
    # The registry is on this machine, so reached over plain HTTP: the command says so.
    command = shlex.join(
        ["nexo", "plugin", "install", pinned, "--allow-downgrade", "--plain-http", "--dest",
         str(root)]
    )  # fmt: skip
    assert refused.document["error"] == (
        "the kept echo 1.0.0 cannot be checked before it comes back: its receipt has no file "
        "hashes (it was installed by another tool); install that version again instead "
        f"(`{command}`); nothing was changed"
    )
    assert _snapshot(root) == before
    # The command, as printed, installs that very version.
    words = shlex.split(command)
    done = nexo(*words[1:], "--skip-signature-verify", "--yes", env=env, in_process=True)
    assert done.code == 0, done.stderr
    assert (root / "echo-1.0.0").is_dir()
    assert not (root / "echo-2.0.0").exists()


def test_an_incompatible_manifest_of_a_registry_copy_is_named_by_its_reference(
    tmp_path: Path, mirrored: tuple[str, dict[str, str]]
) -> None:
    """A registry candidate that carries its manifest (as a release candidate does) is
    refused before any download when it excludes the daemon, and the refusal names the
    version by its pinned reference, not by the release it was mirrored from."""
    from nexo_pkg.core.errors import NexoError
    from nexo_pkg.install.compat import DaemonVersion
    from nexo_pkg.install.manifest_check import manifest_asset_problem
    from nexo_pkg.install.options import InstallOptions
    from nexo_pkg.install.pipeline import command_context, install_from
    from nexo_pkg.sources.api import SourceRequest, open_source

    repository, env = mirrored
    root = tmp_path / "root"
    manifest = 'plugin = { id = "echo", version = "1.0.0", min_nexo_version = ">=9.0" }\n'
    options = InstallOptions(
        dest=root,
        nexo_home=Path(env["NEXO_HOME"]),
        plain_http=True,
        skip_signature_verify=True,
        daemon=DaemonVersion("0.1.0", "--nexo-version"),
    )

    class WithManifest:
        """The registry source, its candidates carrying a manifest asset."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def resolve(self) -> list[Any]:
            return [
                replace(each, manifest=("nexo-plugin.toml", manifest))
                for each in self.inner.resolve()
            ]

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    with command_context(options) as context:
        request = SourceRequest((LINUX,), manifest_asset_problem)
        source = open_source(f"{repository}:1.0.0", context, request)
        with pytest.raises(NexoError) as refused:
            install_from(WithManifest(source), context, options)
    assert refused.value.kind == "incompatible"
    where = str(refused.value).split(" needs a daemon", 1)[0]
    assert where.startswith(f"echo 1.0.0 ({repository}@sha256:"), where
    assert RELEASE not in str(refused.value)
    assert not root.exists() or list(root.iterdir()) == []


def test_the_reinstall_remedy_of_a_changed_registry_copy_works_as_printed(
    tmp_path: Path, mirrored: tuple[str, dict[str, str]]
) -> None:
    """``verify`` of a registry install whose receipt has no file hashes says how to install
    it again to record them: pasted as printed (the loopback registry's ``--plain-http`` and
    the root included), the command installs the very version over itself."""
    repository, env = mirrored
    root = tmp_path / "root"
    assert _install(f"{repository}:1.0.0", root, env).code == 0
    receipt = root / "echo-1.0.0/.nexo-install.json"
    document = json.loads(receipt.read_text())
    del document["files"]
    receipt.write_text(json.dumps(document))
    before = _snapshot(root)
    refused = nexo("plugin", "verify", "echo", "--dest", str(root), env=env, in_process=True)
    assert refused.code == 1, refused.stderr
    assert _snapshot(root) == before  # verify reads only
    text = refused.stdout + refused.stderr
    command = text.split("reinstall it with `", 1)[1].split("`", 1)[0]
    words = shlex.split(command)
    pinned = document["registry"]
    assert words == [
        "nexo", "plugin", "install", pinned, "--force", "--plain-http", "--dest", str(root)
    ]  # fmt: skip
    done = nexo(*words[1:], "--skip-signature-verify", "--yes", env=env, in_process=True)
    assert done.code == 0, done.stderr
    assert "files" in json.loads(receipt.read_text())
