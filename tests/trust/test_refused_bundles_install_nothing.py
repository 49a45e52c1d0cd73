"""``install --require-signature`` of a local tarball whose bundle gh or sigstore-python refuses
installs nothing: one ``signature_invalid`` line, exit 1, no plugin directory.

Real tarball, real bundle minted by the private Sigstore instance, then edited as a reviewer
would: a checkpoint with one more signature line decoding to fewer than 5 bytes
(sigstore-python's ``SignedNote.from_text``: "signature contains too few bytes"), a log entry
whose ``logId`` names no key of the trusted root (gh refuses), and a Rekor key or Fulcio CA
the root retires before the entry was integrated (gh refuses). The unedited bundle installs,
``verified``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.tarballs import write_plugin

from .helpers import ACME_IDENTITY, ACME_REGEXP, write_acme_policy
from .test_differential import _extra_short_signature, _integrated, _retire, _unknown_log

Edit = Callable[[PrivateSigstore, dict[str, Any], dict[str, Any]], None]


def _none(instance: PrivateSigstore, bundle: dict[str, Any], root: dict[str, Any]) -> None:
    del instance, bundle, root


def _short_line(instance: PrivateSigstore, bundle: dict[str, Any], root: dict[str, Any]) -> None:
    del instance, root
    _extra_short_signature(bundle)


def _unknown(instance: PrivateSigstore, bundle: dict[str, Any], root: dict[str, Any]) -> None:
    del root
    _unknown_log(instance, bundle)


def _retired(which: str) -> Edit:
    def edit(instance: PrivateSigstore, bundle: dict[str, Any], root: dict[str, Any]) -> None:
        del instance
        _retire(root, which, _integrated(bundle) - timedelta(seconds=1))

    return edit


ROWS: dict[str, Edit] = {
    "as-signed": _none,
    "checkpoint-extra-short-line": _short_line,
    "unknown-log": _unknown,
    "log-key-retired": _retired("tlogs"),
    "ca-retired": _retired("certificateAuthorities"),
}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_a_refused_bundle_installs_nothing(
    tmp_path: Path, private_sigstore: PrivateSigstore, row: str
) -> None:
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    bundle = private_sigstore.sign(tarball.read_bytes(), identity=ACME_IDENTITY)
    root = private_sigstore.trusted_root()
    ROWS[row](private_sigstore, bundle, root)
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    (tmp_path / "private_trusted_root.json").write_text(json.dumps(root), encoding="utf-8")
    policy = write_acme_policy(tmp_path / "trusted_keys.toml", "^" + ACME_REGEXP + "$")
    home = tmp_path / "home"
    env = {**os.environ, "NEXO_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    result = nexo("plugin", "install", str(tarball), "--require-signature", "--trusted-keys",
                  str(policy), "--yes", "--json", env=env, in_process=True)  # fmt: skip
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    plugins = home / "state" / "plugins"
    installed = (
        sorted(p.name for p in plugins.iterdir() if not p.name.startswith("."))
        if plugins.exists()
        else []
    )
    if row == "as-signed":
        assert result.code == 0, result.stdout
        assert document["signature"]["status"] == "verified"
        assert installed == ["echo-1.2.3"]
    else:
        assert result.code == 1, result.stdout
        assert document["kind"] == "signature_invalid"
        assert installed == []
