"""A trusted root planted in the user's sigstore-python cache (a restored or poisoned CI cache
of ``~/.cache``) vouches for nothing: ``install --require-signature`` of a tarball signed by
the instance the planted root describes is refused, nothing is installed, and ``--verbose``
names the root used, the one shipped inside sigstore-python.

The console script runs in its own process with ``HOME`` under the test and no ``XDG_*``
variables, so sigstore-python's cache is ``$HOME/.cache/sigstore-python``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.private_sigstore import PrivateSigstore
from support.tarballs import write_plugin

from .helpers import ACME_IDENTITY

REPOSITORY = "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"


@pytest.mark.parametrize("verbose", [True, False], ids=["verbose", "plain"])
def test_a_root_planted_in_the_users_cache_installs_nothing(
    tmp_path: Path, private_sigstore: PrivateSigstore, verbose: bool
) -> None:
    """With or without ``--verbose``, the ignored root is said as a ``warning:`` line, once."""
    home = tmp_path / "user"
    planted = home / ".cache" / "sigstore-python" / "tuf" / REPOSITORY
    planted.mkdir(parents=True)
    private_sigstore.write_trusted_root(planted / "trusted_root.json")
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    bundle = private_sigstore.sign(tarball.read_bytes(), identity=ACME_IDENTITY)
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        f'schema_version = "1.0"\ndefault = "require"\n\n[[authors]]\nowner = "acme"\n'
        f'identity = "{ACME_IDENTITY}"\n',
        encoding="utf-8",
    )
    env = {key: value for key, value in clean_env().items() if not key.startswith("XDG_")} | {
        "HOME": str(home),
        "NEXO_HOME": str(tmp_path / "nexo"),
    }
    result = nexo("plugin", "install", str(tarball), "--require-signature", "--trusted-keys",
                  str(policy), "--yes", *(["--verbose"] if verbose else []), env=env,
                  cwd=tmp_path)  # fmt: skip
    assert result.code == 1, result.stderr
    # The error line names its kind (docs/cli.md).
    assert "[signature_invalid]" in result.stderr
    assert "error: " in result.stderr
    shipped = "trusted root: the public-good root shipped in sigstore-python"
    assert (shipped in result.stderr) is verbose
    ignored = f"warning: ignoring the cached public-good root {planted / 'trusted_root.json'}: "
    assert [line for line in result.stderr.splitlines() if "cached public-good" in line] == [
        line for line in result.stderr.splitlines() if line.startswith(ignored)
    ]
    assert sum(line.startswith(ignored) for line in result.stderr.splitlines()) == 1
    plugins = tmp_path / "nexo" / "state" / "plugins"
    assert not plugins.exists() or not [p for p in plugins.iterdir() if p.name[0] != "."]
