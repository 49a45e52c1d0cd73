"""``nexo plugin schema``, from the outside: every schema it prints is a valid Draft 2020-12
schema with its own ``$id``, and the documents nexo-pkg itself writes validate against it."""

from __future__ import annotations

import json
import tomllib
from functools import partial
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from support.cli import nexo

from nexo_pkg.fleet.lockfile import Lock, LockedPlugin, LockedTarget, read_lock, render_lock

plugin = partial(nexo, "plugin", in_process=True)
KINDS = ("plugin", "microapp", "extensions", "wanted", "lock", "trusted-keys", "lint-report")


def _printed(kind: str) -> dict[str, object]:
    done = plugin("schema", "--kind", kind)
    assert done.code == 0, done.stderr
    assert done.stderr == ""
    document = json.loads(done.stdout)
    assert isinstance(document, dict)
    return document


def test_every_schema_is_valid_with_an_id_of_its_own() -> None:
    ids = []
    for kind in KINDS:
        schema = _printed(kind)
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert isinstance(schema["$id"], str)
        assert schema["$id"].startswith("https://")
        ids.append(schema["$id"])
    assert len(set(ids)) == len(KINDS)
    assert plugin("schema").stdout == plugin("schema", "--kind", "plugin").stdout


@pytest.mark.parametrize("with_sbom", [False, True])
def test_a_lock_nexo_pkg_writes_validates_against_the_lock_schema(
    tmp_path: Path, with_sbom: bool
) -> None:
    """Every key the lock writer records (``tree``, ``sbom``: every packed tarball carries an
    SBOM, ``manifest``, the signer) is one the schema an editor checks the file with knows."""
    digest = "sha256:" + "c" * 64
    target = LockedTarget(
        "noarch", "echo-1.2.3-noarch.tar.gz", 10, "a" * 64,
        manifest=digest, tree="n1:" + "b" * 64, sbom=digest if with_sbom else None,
        identity="https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1.2.3",
        issuer="https://token.actions.githubusercontent.com",
    )  # fmt: skip
    lock = Lock()
    lock.plugins["echo"] = LockedPlugin(
        "echo", "oci://127.0.0.1:5000/plugins/echo", "*", None, "1.2.3",
        "oci://127.0.0.1:5000/plugins/echo@sha256:" + "d" * 64, {"noarch": target},
        published="2026-01-01T00:00:00Z",
    )  # fmt: skip
    text = render_lock(lock)
    assert ("sbom = " in text) is with_sbom
    path = tmp_path / "nexo-plugins.lock"
    path.write_text(text)
    assert read_lock(path).plugins == lock.plugins
    errors = list(Draft202012Validator(_printed("lock")).iter_errors(tomllib.loads(text)))
    assert [error.message for error in errors] == []
