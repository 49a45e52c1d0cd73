"""Attestation shapes and tampering beyond the one-subject statement ``attest`` makes.

Each row is a DSSE attestation minted by the private Sigstore instance (real certificate,
SCT, log entry) about a real plugin tarball, with the in-toto statement written as the row
says, then put beside the tarball as ``<asset>.intoto.jsonl``. ``trust verify`` and
``install --require-signature`` of the local tarball must give the same verdict as
``gh attestation verify`` (sigstore-go reads the statement with protojson): a statement that
names the tarball among several subjects, in capitals, or on the second line of the file
verifies; a statement that repeats a key (protojson refuses it; which value counts would be
the reader's choice), names no SHA-256 of the tarball, or was edited after signing is
``signature_invalid``; another predicate type alone is ``signer_untrusted``. A refusal
installs nothing.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.tarballs import write_plugin

from .helpers import ACME_IDENTITY, ACME_REGEXP, write_acme_policy

IN_TOTO = "application/vnd.in-toto+json"
SLSA = "https://slsa.dev/provenance/v1"
OTHER = hashlib.sha256(b"another file").hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _attest(
    instance: PrivateSigstore, payload: bytes, payload_type: str = IN_TOTO
) -> dict[str, Any]:
    """A v0.3 bundle of a DSSE envelope over ``payload``, logged as a dsse entry, signed by
    acme's release workflow of ``acme/nexo-plugin-echo``."""
    return instance.attest_payload(
        payload,
        identity=ACME_IDENTITY,
        repository="acme/nexo-plugin-echo",
        ref="refs/tags/v1.2.3",
        payload_type=payload_type,
    )


def _statement(*digests: dict[str, str], predicate_type: str = SLSA, kind: str = "v1") -> bytes:
    return json.dumps(
        {
            "_type": f"https://in-toto.io/Statement/{kind}",
            "subject": [{"name": f"file{i}", "digest": d} for i, d in enumerate(digests)],
            "predicateType": predicate_type,
            "predicate": {"buildDefinition": {"buildType": "https://nexo.test/build"}},
        }
    ).encode()


def _repeated_subject(digest: str) -> bytes:
    """Two ``subject`` keys: another file first, the tarball last (what ``json.loads`` keeps)."""
    subject = '"subject": [{"name": "f", "digest": {"sha256": "%s"}}]'
    return (
        '{"_type": "https://in-toto.io/Statement/v1", '
        + subject % OTHER
        + ", "
        + subject % digest
        + f', "predicateType": "{SLSA}", "predicate": {{}}}}'
    ).encode()


def _edited_payload(instance: PrivateSigstore, digest: str) -> dict[str, Any]:
    bundle = _attest(instance, _statement({"sha256": OTHER}))
    bundle["dsseEnvelope"]["payload"] = _b64(_statement({"sha256": digest}))
    return bundle


def _two_signatures(instance: PrivateSigstore, digest: str) -> dict[str, Any]:
    bundle = _attest(instance, _statement({"sha256": digest}))
    signatures = bundle["dsseEnvelope"]["signatures"]
    signatures.append(copy.deepcopy(signatures[0]))
    return bundle


Rows = dict[str, tuple[Callable[[PrivateSigstore, str], list[dict[str, Any]]], str]]
ROWS: Rows = {
    "tarball-among-subjects": (
        lambda i, d: [_attest(i, _statement({"sha256": OTHER}, {"sha256": d}))],
        "verified",
    ),
    "digest-in-capitals": (
        lambda i, d: [_attest(i, _statement({"sha256": d.upper()}))],
        "verified",
    ),
    "statement-v0.1": (
        lambda i, d: [_attest(i, _statement({"sha256": d}, kind="v0.1"))],
        "verified",
    ),
    "second-line-about-the-tarball": (
        lambda i, d: [
            _attest(i, _statement({"sha256": OTHER})),
            _attest(i, _statement({"sha256": d})),
        ],
        "verified",
    ),
    "repeated-subject-key": (lambda i, d: [_attest(i, _repeated_subject(d))], "signature_invalid"),
    "sha512-only": (
        lambda i, d: [_attest(i, _statement({"sha512": hashlib.sha512(d.encode()).hexdigest()}))],
        "signature_invalid",
    ),
    "prefixed-digest": (
        lambda i, d: [_attest(i, _statement({"sha256": "sha256:" + d}))],
        "signature_invalid",
    ),
    "json-payload-type": (
        lambda i, d: [_attest(i, _statement({"sha256": d}), "application/json")],
        "signature_invalid",
    ),
    "payload-edited-after-signing": (lambda i, d: [_edited_payload(i, d)], "signature_invalid"),
    "two-signatures": (lambda i, d: [_two_signatures(i, d)], "signature_invalid"),
    "sbom-predicate-only": (
        lambda i, d: [
            _attest(i, _statement({"sha256": d}, predicate_type="https://spdx.dev/Document/v2.3"))
        ],
        "signer_untrusted",
    ),
}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_an_attestation_shape_gets_ghs_verdict_and_a_refusal_installs_nothing(
    tmp_path: Path, private_sigstore: PrivateSigstore, row: str
) -> None:
    make, verdict = ROWS[row]
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    attestations = tarball.with_name(tarball.name + ".intoto.jsonl")
    attestations.write_text(
        "".join(json.dumps(b) + "\n" for b in make(private_sigstore, digest)), encoding="utf-8"
    )
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = write_acme_policy(tmp_path / "trusted_keys.toml", "^" + ACME_REGEXP + "$")
    home = tmp_path / "home"
    env = {**os.environ, "NEXO_HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    checked = nexo("plugin", "trust", "verify", str(tarball), "--bundle", str(attestations),
                   "--trusted-keys", str(policy), "--json", env=env, in_process=True)  # fmt: skip
    installed = nexo("plugin", "install", str(tarball), "--require-signature", "--trusted-keys",
                     str(policy), "--yes", "--json", env=env, in_process=True)  # fmt: skip
    plugins = home / "state" / "plugins"
    left = (
        sorted(p.name for p in plugins.iterdir() if p.name != ".nexo") if plugins.exists() else []
    )
    for result in (checked, installed):
        assert "Traceback" not in result.stderr
        document = json.loads(result.stdout)
        if verdict == "verified":
            assert result.code == 0, result.stdout
            status = document.get("status") or document["signature"]["status"]
            assert status == "verified", document
        else:
            assert result.code == 1, result.stdout
            assert document["kind"] == verdict, document
    if verdict == "verified":
        assert "echo-1.2.3" in left
    else:
        assert [name for name in left if not name.startswith(".")] == []
