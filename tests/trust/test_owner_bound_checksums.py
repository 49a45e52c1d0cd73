"""A signed checksums file binds its signer to the entry's owner as a bundle does.

``evil/repo`` calls ``acme``'s reusable release workflow to sign a GoReleaser-style
``checksums.txt`` that lists the tarball. Under an ``acme`` entry matching that workflow with
``allow_republish = true``, ``trust verify`` of the tarball (the checksums file's bundle as
``--bundle``) refuses it, with or without ``--owner``: ``signer_untrusted``, exit 1. The same
workflow run for acme's own repository verifies.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.tarballs import write_plugin

from .helpers import cli_env

SHARED_WORKFLOW = "https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v1.2.3"


@pytest.mark.parametrize("scope", [(), ("--owner", "acme")], ids=["no-owner", "owner"])
@pytest.mark.parametrize("repository", ["evil/repo", "acme/workflows"])
def test_a_checksums_file_signed_from_another_owners_repository_is_refused(
    *, tmp_path: Path, private_sigstore: PrivateSigstore, repository: str, scope: tuple[str, ...]
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ndefault = "require"\n'
        'trusted_root = "private_trusted_root.json"\n\n[[authors]]\nowner = "acme"\n'
        "identity_regexp = '^https://github\\.com/acme/workflows/.*$'\nallow_republish = true\n",
        encoding="utf-8",
    )
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    listed = f"{hashlib.sha256(tarball.read_bytes()).hexdigest()}  {tarball.name}\n".encode()
    checksums = tarball.parent / "checksums.txt"
    checksums.write_bytes(listed)
    bundle = checksums.with_name("checksums.txt.sigstore.json")
    bundle.write_text(
        json.dumps(private_sigstore.sign(listed, identity=SHARED_WORKFLOW, repository=repository))
    )
    result = nexo("plugin", "trust", "verify", str(tarball), "--bundle", str(bundle), *scope,
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    if repository == "evil/repo":
        assert result.code == 1, result.stdout
        assert document["kind"] == "signer_untrusted"
        assert "evil/repo, outside owner acme" in document["error"]
    else:
        assert result.code == 0, result.stdout
        assert document["status"] == "verified"
        assert document["scheme"] == "checksums-file"
