"""A registry copy without an origin annotation still binds the signer to the entry's owner.

``evil/repo`` calls ``acme``'s public reusable release workflow: the certificate's SAN is
acme's workflow, its source repository is evil's. The copy is pushed to a real registry with
no origin, so no owner is known before the signature is read; an ``acme`` entry whose
``identity_regexp`` matches that SAN, with ``allow_republish = true``, must still refuse it,
as ``gh attestation verify`` refuses another source repository owner. Nothing is installed.
The same workflow run for acme's own repository installs, ``verified``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.registry import Registry
from support.tarballs import manifest_text, plugin_tarball, write_plugin

SHARED_WORKFLOW = "https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v1.2.3"
SHARED_REGEXP = (
    r"^https://github\.com/acme/workflows/\.github/workflows/release\.yml@refs/tags/v.*$"
)


def _dist(tmp_path: Path, private_sigstore: PrivateSigstore, repository: str) -> Path:
    directory = tmp_path / f"dist-{repository.replace('/', '-')}"
    path = write_plugin(directory, "echo", "1.2.3", data=plugin_tarball("echo", "1.2.3"))
    bundle = private_sigstore.sign(
        path.read_bytes(), identity=SHARED_WORKFLOW, repository=repository
    )
    path.with_name(path.name + ".sigstore.json").write_text(json.dumps(bundle))
    (directory / "nexo-plugin.toml").write_text(manifest_text("echo", "1.2.3"))
    return directory


def _policy(tmp_path: Path, private_sigstore: PrivateSigstore) -> Path:
    directory = tmp_path / "policy"
    directory.mkdir()
    root = private_sigstore.write_trusted_root(directory / "private_trusted_root.json")
    path = directory / "trusted_keys.toml"
    path.write_text(
        'schema_version = "1.0"\ndefault = "require"\n'
        f'trusted_root = "{root.name}"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{SHARED_REGEXP}'\n"
        "allow_republish = true\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("repository", ["evil/repo", "acme/workflows"])
def test_an_unannotated_copy_signed_from_another_owners_repository_is_not_installed(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    private_sigstore: PrivateSigstore,
    repository: str,
) -> None:
    pushed = nexo("plugin", "push", str(_dist(tmp_path, private_sigstore, repository)),
                  registry.ref("plugins/echo"), "--plain-http", env=fleet_env,
                  in_process=True)  # fmt: skip
    assert pushed.code == 0, pushed.stderr
    dest = tmp_path / "plugins"
    result = nexo("plugin", "install", registry.ref("plugins/echo:1.2.3"), "--dest", str(dest),
                  "--plain-http", "--trusted-keys", str(_policy(tmp_path, private_sigstore)),
                  "--require-signature", "--yes", "--json", env=fleet_env,
                  in_process=True)  # fmt: skip
    assert "Traceback" not in result.stderr
    document = result.document
    installed = (
        sorted(p.name for p in dest.iterdir() if not p.name.startswith("."))
        if dest.exists()
        else []
    )
    if repository == "evil/repo":
        assert result.code == 1, result.stderr
        assert document["kind"] == "signer_untrusted"
        assert "evil/repo, outside owner acme" in str(document["error"])
        assert installed == []
    else:
        assert result.code == 0, result.stderr
        signature = document["signature"]
        assert isinstance(signature, dict)
        assert (signature["status"], signature["identity"]) == ("verified", SHARED_WORKFLOW)
        assert installed == ["echo-1.2.3"]
