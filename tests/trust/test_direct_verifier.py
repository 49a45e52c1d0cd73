"""The direct verifier never accepts a bundle that sigstore-python refuses.

Every bundle :func:`verify_directly` accepts is verified by sigstore-python's public
``Verifier`` too, with the same signing certificate (and, for an envelope, the same payload):
the real public-good and GitHub fixtures, every structural mutation of them (each field
dropped, added, re-typed, each base64 value with a bit flipped), and bundles of a private
Sigstore instance whose log entries, certificates and SCTs are wrong in one way each but
correctly logged and signed, so that only the consistency checks can catch them.
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import Prehashed
from hypothesis import given, settings
from hypothesis import strategies as st
from support.private_sigstore import BUNDLE_V03, PrivateSigstore, random_bytes
from support.shared_fixtures import require_shared_fixture

from nexo_pkg.trust.verifiers.direct import Verified, verify_directly

from .helpers import FIXTURES, SHARED_FIXTURES, VECTOR_ARTIFACT, edited, text_edits

IDENTITY = "https://github.com/acme/plugin/.github/workflows/release.yml@refs/tags/v1.0.0"
ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
REAL = {
    "public-good message signature": (
        FIXTURES / VECTOR_ARTIFACT,
        FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json",
    ),
    "GitHub attestation, reusable workflow": (
        ATTESTATIONS / "reusable-workflow-artifact",
        ATTESTATIONS / "reusable-workflow-attestation.sigstore.json",
    ),
    "GitHub attestation, custom issuer": (
        ATTESTATIONS / "custom-issuer-artifact",
        ATTESTATIONS / "custom-issuer.sigstore.json",
    ),
}

Outcome = tuple[bytes, tuple[str, bytes] | None]


@functools.cache
def _public_good_verifier() -> Any:
    from sigstore.verify import Verifier

    return Verifier.production(offline=True)


def _sigstore(document: dict[str, Any], digest: bytes, trusted_root: Path | None) -> Outcome | None:
    """sigstore-python's verdict through its public API: the certificate and payload, or
    ``None`` when it refuses."""
    from sigstore.hashes import Hashed
    from sigstore.models import Bundle, TrustedRoot
    from sigstore.verify import Verifier
    from sigstore.verify.policy import UnsafeNoOp
    from sigstore_models.common.v1 import HashAlgorithm

    try:
        if trusted_root is None:
            verifier = _public_good_verifier()
        else:
            verifier = Verifier(trusted_root=TrustedRoot.from_file(str(trusted_root)))
        bundle = Bundle.from_json(json.dumps(document))
        if "dsseEnvelope" in document:
            payload_type, payload = verifier.verify_dsse(bundle, UnsafeNoOp())
            result: tuple[str, bytes] | None = (payload_type, payload)
        else:
            hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=digest)
            verifier.verify_artifact(hashed, bundle, UnsafeNoOp())
            result = None
    except Exception:  # noqa: BLE001 - any refusal is a refusal
        return None
    return bundle.signing_certificate.public_bytes(serialization.Encoding.DER), result


def _direct(document: dict[str, Any], digest: bytes, trusted_root: Path | None) -> Outcome | None:
    found: Verified | None = verify_directly(json.dumps(document).encode(), trusted_root, digest)
    if found is None:
        return None
    return found.certificate.public_bytes(serialization.Encoding.DER), found.payload


def _load(label: str) -> tuple[dict[str, Any], bytes]:
    artifact, bundle = REAL[label]
    require_shared_fixture(bundle.parent.name, bundle.name)
    return json.loads(bundle.read_text()), hashlib.sha256(artifact.read_bytes()).digest()


@pytest.mark.parametrize("label", sorted(REAL))
def test_the_real_bundles_are_verified_directly_as_sigstore_verifies_them(label: str) -> None:
    document, digest = _load(label)
    direct = _direct(document, digest, None)
    assert direct is not None
    assert direct == _sigstore(document, digest, None)


def _is_base64(value: str) -> bool:
    try:
        return bool(value) and base64.b64encode(base64.b64decode(value, validate=True)) == (
            value.encode()
        )
    except (binascii.Error, ValueError):
        return False


def _leaf_variants(value: Any) -> Iterator[Any]:
    if isinstance(value, str):
        yield value + "x"
        yield ""
        if value.isdigit():
            yield int(value)
            yield str(int(value) + 1)
        if _is_base64(value):
            raw = bytearray(base64.b64decode(value))
            for position in sorted({0, len(raw) // 2, len(raw) - 1}):
                flipped = bytearray(raw)
                flipped[position] ^= 0x01
                yield base64.b64encode(bytes(flipped)).decode()
            yield base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    else:
        yield str(value)
        yield None


def _mutations(node: Any) -> Iterator[tuple[str, Any]]:
    """(what changed, the changed copy of ``node``) for every single change to ``node``."""
    if isinstance(node, dict):
        yield "added a field", {**node, "unknownField": "x"}
        for key, value in node.items():
            yield f"dropped {key}", {k: v for k, v in node.items() if k != key}
            for what, changed in _mutations(value):
                yield f"{key}: {what}", {**node, key: changed}
    elif isinstance(node, list):
        yield "emptied the list", []
        if node:
            yield "doubled the list", node + node[:1]
        for index, value in enumerate(node):
            for what, changed in _mutations(value):
                yield f"[{index}]: {what}", [*node[:index], changed, *node[index + 1 :]]
    else:
        for changed in _leaf_variants(node):
            yield f"{node!r:.20} -> {changed!r:.20}", changed


@pytest.mark.parametrize("label", sorted(REAL))
def test_no_mutation_of_a_real_bundle_is_accepted_unless_sigstore_accepts_it(label: str) -> None:
    document, digest = _load(label)
    accepted: list[str] = []
    count = 0
    for what, mutated in _mutations(document):
        if mutated == document:  # a base64 text that reads the same
            continue
        count += 1
        direct = _direct(mutated, digest, None)
        if direct is not None:
            assert direct == _sigstore(mutated, digest, None), what
            accepted.append(what)
    assert count > 150  # the walk reached every field
    # Only what no signature covers and no check needs may change: the empty
    # timestampVerificationData object of GitHub's bundles, the optional message digest.
    assert set(accepted) <= {
        "verificationMaterial: dropped timestampVerificationData",
        "messageSignature: dropped messageDigest",
    }


def test_another_files_digest_is_not_accepted() -> None:
    for label in REAL:
        document, digest = _load(label)
        other = hashlib.sha256(digest).digest()
        if "messageSignature" in document:
            assert _direct(document, other, None) is None
        else:  # the envelope is verified; whether it is about this file is the caller's check
            assert _direct(document, other, None) == _direct(document, digest, None)


# --- a private instance: correctly logged and signed, wrong in one way each -------------------


def _pem(instance: PrivateSigstore) -> tuple[Any, str]:
    issued = instance.issue_certificate(IDENTITY)
    pem = base64.b64encode(issued.certificate.public_bytes(serialization.Encoding.PEM)).decode()
    return issued, pem


def _logged(
    instance: PrivateSigstore,
    issued: Any,
    body: dict[str, Any],
    content: dict[str, Any],
    *,
    kind: str,
    logged_at: int | None = None,
) -> dict[str, Any]:
    start = int(issued.certificate.not_valid_before_utc.timestamp())
    entry = instance.log_entry(
        rfc8785.dumps(body), integrated_time=logged_at or start + 60, kind=kind
    )
    der = issued.certificate.public_bytes(serialization.Encoding.DER)
    return {
        "mediaType": BUNDLE_V03,
        "verificationMaterial": {
            "tlogEntries": [entry],
            "certificate": {"rawBytes": base64.b64encode(der).decode()},
        },
        **content,
    }


def _signature_variants(instance: PrivateSigstore, artifact: bytes) -> Iterator[tuple[str, Any]]:
    digest = hashlib.sha256(artifact).digest()
    issued, pem = _pem(instance)
    signature = issued.key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256())))
    b64 = base64.b64encode(signature).decode()
    content = {"messageSignature": {"signature": b64}}

    def body(**changes: Any) -> dict[str, Any]:
        spec = {
            "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
            "signature": {"content": b64, "publicKey": {"content": pem}},
        }
        document: dict[str, Any] = {"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": spec}
        for path, value in changes.items():
            target: Any = document
            *parents, last = path.split("__")
            for parent in parents:
                target = target[parent]
            target[last] = value
        return document

    yield "signature as logged", _logged(instance, issued, body(), content, kind="hashedrekord")
    other = hashlib.sha256(b"another file").hexdigest()
    crlf = pem and base64.b64encode(base64.b64decode(pem).replace(b"\n", b"\r\n")).decode()
    _, stranger = _pem(instance)
    for label, changed in {
        "another digest logged": body(spec__data__hash__value=other),
        "upper-case digest logged": body(spec__data__hash__value=digest.hex().upper()),
        "another hash name": body(spec__data__hash__algorithm="SHA256"),
        "another certificate logged": body(spec__signature__publicKey__content=stranger),
        "the certificate logged with CRLF": body(spec__signature__publicKey__content=crlf),
        "another signature logged": body(spec__signature__content=base64.b64encode(b"x").decode()),
        "an extra field logged": body(spec__extra="x"),
        "another version logged": body(apiVersion="0.0.2"),
    }.items():
        yield label, _logged(instance, issued, changed, content, kind="hashedrekord")
    yield "logged as dsse", _logged(instance, issued, body(), content, kind="dsse")
    with_digest: dict[str, Any] = {
        "messageSignature": {
            "signature": b64,
            "messageDigest": {"algorithm": "SHA2_256", "digest": base64.b64encode(digest).decode()},
        }
    }
    yield (
        "with its message digest",
        _logged(instance, issued, body(), with_digest, kind="hashedrekord"),
    )
    wrong = copy.deepcopy(with_digest)
    wrong["messageSignature"]["messageDigest"]["digest"] = base64.b64encode(bytes(32)).decode()
    yield (
        "with another message digest",
        _logged(instance, issued, body(), wrong, kind="hashedrekord"),
    )
    start = int(issued.certificate.not_valid_before_utc.timestamp())
    for label, moment in {
        "logged before the certificate": start - 60,
        "logged after the certificate expired": start + 3600,
    }.items():
        yield (
            label,
            _logged(instance, issued, body(), content, kind="hashedrekord", logged_at=moment),
        )
    untrusted = instance.issue_certificate(
        IDENTITY, sct_key=ec.generate_private_key(ec.SECP256R1())
    )
    sig = untrusted.key.sign(digest, ec.ECDSA(Prehashed(hashes.SHA256())))
    untrusted_pem = base64.b64encode(untrusted.certificate.public_bytes(serialization.Encoding.PEM))
    untrusted_body = {
        "apiVersion": "0.0.1",
        "kind": "hashedrekord",
        "spec": {
            "data": {"hash": {"algorithm": "sha256", "value": digest.hex()}},
            "signature": {
                "content": base64.b64encode(sig).decode(),
                "publicKey": {"content": untrusted_pem.decode()},
            },
        },
    }
    untrusted_content = {"messageSignature": {"signature": base64.b64encode(sig).decode()}}
    yield (
        "an SCT of an untrusted log",
        _logged(instance, untrusted, untrusted_body, untrusted_content, kind="hashedrekord"),
    )


def _envelope_variants(instance: PrivateSigstore) -> Iterator[tuple[str, Any]]:
    issued, pem = _pem(instance)
    payload = json.dumps({"_type": "https://in-toto.io/Statement/v1", "subject": []}).encode()
    payload_type = "application/vnd.in-toto+json"
    pae = b"DSSEv1 %d %b %d %b" % (len(payload_type), payload_type.encode(), len(payload), payload)
    signature = base64.b64encode(issued.key.sign(pae, ec.ECDSA(hashes.SHA256()))).decode()
    envelope = {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": payload_type,
        "signatures": [{"sig": signature}],
    }
    content = {"dsseEnvelope": envelope}
    payload_hash: dict[str, Any] = {
        "algorithm": "sha256",
        "value": hashlib.sha256(payload).hexdigest(),
    }
    signed = [{"signature": signature, "verifier": pem}]

    def body(spec: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": "0.0.1", "kind": "dsse", "spec": spec}

    _, stranger = _pem(instance)
    envelope_hash = {"algorithm": "sha256", "value": "00" * 32}
    genuine: dict[str, Any] = {
        "envelopeHash": envelope_hash,
        "payloadHash": payload_hash,
        "signatures": signed,
    }
    variants: dict[str, dict[str, Any]] = {
        "envelope as logged": genuine,
        "no envelope hash": {"payloadHash": payload_hash, "signatures": signed},
        "another envelope hash name": {
            **genuine,
            "envelopeHash": {**envelope_hash, "algorithm": "md5"},
        },
        "another payload hash": {**genuine, "payloadHash": {**payload_hash, "value": "00" * 32}},
        "another verifier": {
            **genuine,
            "signatures": [{"signature": signature, "verifier": stranger}],
        },
        "two signatures logged": {**genuine, "signatures": signed + signed},
        "an extra field": {**genuine, "extra": 1},
    }
    for label, spec in variants.items():
        yield label, _logged(instance, issued, body(spec), content, kind="dsse")
    as_logged = body(genuine)
    yield (
        "logged as hashedrekord",
        _logged(instance, issued, as_logged, content, kind="hashedrekord"),
    )
    tampered = copy.deepcopy(envelope)
    tampered["payloadType"] = "text/plain"
    yield (
        "another payload type",
        _logged(instance, issued, as_logged, {"dsseEnvelope": tampered}, kind="dsse"),
    )


def test_private_instance_variants_are_accepted_only_as_sigstore_accepts_them(
    tmp_path: Path,
) -> None:
    instance = PrivateSigstore.create()
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    artifact = random_bytes()
    digest = hashlib.sha256(artifact).digest()
    verdicts: dict[str, tuple[bool, bool]] = {}
    for label, document in [
        *_signature_variants(instance, artifact),
        *_envelope_variants(instance),
    ]:
        direct = _direct(document, digest, root)
        theirs = _sigstore(document, digest, root)
        if direct is not None:
            assert direct == theirs, label
        verdicts[label] = (direct is not None, theirs is not None)
    accepted = {label for label, (ours, _) in verdicts.items() if ours}
    # Both genuine shapes pass directly; nothing else does.
    assert accepted == {"signature as logged", "with its message digest", "envelope as logged"}
    assert all(theirs for label, (_, theirs) in verdicts.items() if label in accepted)


def test_a_cached_trusted_root_other_than_the_embedded_one_is_left_to_sigstore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    document, digest = _load("public-good message signature")
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert _direct(document, digest, None) is not None
    from nexo_pkg.trust.verifiers.rootkeys import public_good_root_file

    cached = cache / "sigstore-python" / "tuf" / "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"
    cached.mkdir(parents=True)
    (cached / "trusted_root.json").write_bytes(public_good_root_file().read_bytes())
    assert _direct(document, digest, None) is not None  # the copy sigstore-python makes
    (cached / "trusted_root.json").write_text(json.dumps({"mediaType": "refreshed"}))
    assert _direct(document, digest, None) is None


def test_a_private_root_without_the_signers_ca_is_not_accepted(tmp_path: Path) -> None:
    document, digest = _load("public-good message signature")
    other = PrivateSigstore.create().write_trusted_root(tmp_path / "trusted_root.json")
    assert _direct(document, digest, other) is None
    assert _sigstore(document, digest, other) is None


def test_a_ca_not_valid_yet_is_not_trusted(tmp_path: Path) -> None:
    instance = PrivateSigstore.create()
    artifact = random_bytes()
    document = instance.sign(artifact, identity=IDENTITY)
    root = instance.trusted_root()
    for authority in root["certificateAuthorities"]:
        authority["validFor"]["start"] = "2999-01-01T00:00:00Z"
    path = tmp_path / "trusted_root.json"
    path.write_text(json.dumps(root))
    digest = hashlib.sha256(artifact).digest()
    assert _direct(document, digest, instance.write_trusted_root(tmp_path / "now.json"))
    assert _direct(document, digest, path) is None
    assert _sigstore(document, digest, path) is None


def test_a_log_key_declared_for_another_hash_is_left_to_sigstore(tmp_path: Path) -> None:
    """The checks hash with SHA-256; a Rekor key the root declares for another algorithm is
    not used by the direct verifier (sigstore-python would hash as declared)."""
    instance = PrivateSigstore.create()
    artifact = random_bytes()
    document = instance.sign(artifact, identity=IDENTITY)
    digest = hashlib.sha256(artifact).digest()
    root = instance.trusted_root()
    assert _direct(document, digest, instance.write_trusted_root(tmp_path / "as-is.json"))
    for log in root["tlogs"]:
        log["publicKey"]["keyDetails"] = "PKIX_ECDSA_P384_SHA_384"
    declared = tmp_path / "declared.json"
    declared.write_text(json.dumps(root))
    assert _direct(document, digest, declared) is None


def test_a_bundle_read_two_ways_is_left_to_sigstore() -> None:
    """A key given twice (parsers disagree on which one counts) or a NaN is not vouched for."""
    document, digest = _load("public-good message signature")
    raw = json.dumps(document)
    assert verify_directly(raw.encode(), None, digest) is not None
    twice = raw.replace('{"mediaType"', '{"mediaType": "x", "mediaType"', 1)
    assert twice != raw
    assert json.loads(twice) == document  # Python keeps the last one
    assert verify_directly(twice.encode(), None, digest) is None
    nan = raw.replace('{"mediaType"', '{"x": NaN, "mediaType"', 1)
    assert verify_directly(nan.encode(), None, digest) is None


@settings(max_examples=150, deadline=None)
@given(label=st.sampled_from(sorted(REAL)), edits=text_edits(max_size=3))
def test_edited_text_is_accepted_only_as_sigstore_accepts_it(
    label: str, edits: list[tuple[float, str]]
) -> None:
    """Characters changed anywhere in a real bundle's indented text (the property above, at
    the byte level): what the direct verifier accepts sigstore-python accepts the same, and
    an edit that leaves the same JSON document (layout, not content) is still accepted."""
    document, digest = _load(label)
    text = edited(json.dumps(document, indent=2), edits)
    found = verify_directly(text.encode(), None, digest)
    try:
        same = json.loads(text) == document
    except ValueError:
        same = False
    if same:
        assert found is not None
    if found is not None:
        ours = (found.certificate.public_bytes(serialization.Encoding.DER), found.payload)
        assert ours == _sigstore(json.loads(text), digest, None)


def test_fields_of_the_wrong_type_are_left_to_sigstore() -> None:
    """Values the bundle schema types (sigstore-python's parser refuses them) are not
    vouched for, even where the direct checks would not read them."""
    document, digest = _load("GitHub attestation, reusable workflow")
    for path, value in {
        ("dsseEnvelope", "signatures", 0, "keyid"): 5,
        ("verificationMaterial", "timestampVerificationData", "rfc3161Timestamps"): 0,
    }.items():
        changed = copy.deepcopy(document)
        target: Any = changed
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
        assert _direct(changed, digest, None) is None, path
        assert _sigstore(changed, digest, None) is None, path


def test_a_non_ascii_payload_type_is_left_to_sigstore(tmp_path: Path) -> None:
    """DSSE's PAE counts the payload type in bytes, sigstore-python in characters: an
    envelope signed over the byte-counted PAE of a non-ASCII type (which the direct checks
    alone would verify) is not vouched for, and sigstore-python refuses it."""
    instance = PrivateSigstore.create()
    root = instance.write_trusted_root(tmp_path / "trusted_root.json")
    issued, pem = _pem(instance)
    payload = b'{"_type": "https://in-toto.io/Statement/v1", "subject": []}'
    digest = hashlib.sha256(payload).digest()
    verdicts = []
    for payload_type in ("application/vnd.in-toto+json", "application/vnd.\u00efn-toto+json"):
        kind = payload_type.encode()
        pae = b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(payload), payload)
        signature = base64.b64encode(issued.key.sign(pae, ec.ECDSA(hashes.SHA256()))).decode()
        envelope = {
            "payload": base64.b64encode(payload).decode(),
            "payloadType": payload_type,
            "signatures": [{"sig": signature}],
        }
        body = {
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {"algorithm": "sha256", "value": "00" * 32},
                "payloadHash": {"algorithm": "sha256", "value": digest.hex()},
                "signatures": [{"signature": signature, "verifier": pem}],
            },
        }
        document = _logged(instance, issued, body, {"dsseEnvelope": envelope}, kind="dsse")
        verdicts.append((_direct(document, digest, root), _sigstore(document, digest, root)))
    (ascii_ours, ascii_theirs), (other_ours, other_theirs) = verdicts
    assert ascii_ours is not None
    assert ascii_ours == ascii_theirs
    assert other_ours is None
    assert other_theirs is None


@pytest.mark.parametrize("label", sorted(REAL))
def test_the_layout_of_a_bundle_is_not_its_content(label: str) -> None:
    """Indentation, separators and key order change no verdict: only the JSON values are
    read (the signed bytes are the decoded base64 values, not the bundle's text)."""
    document, digest = _load(label)
    expected = _direct(document, digest, None)
    assert expected is not None
    layouts: list[dict[str, Any]] = [
        {"indent": 4},
        {"separators": (",", ":")},
        {"sort_keys": True, "indent": "\t"},
    ]
    for layout in layouts:
        text = json.dumps(document, **layout)
        found = verify_directly(text.encode(), None, digest)
        assert found is not None, layout
        assert (found.certificate.public_bytes(serialization.Encoding.DER), found.payload) == (
            expected
        )


@pytest.mark.parametrize("section", ["tlogs", "ctlogs"])
def test_a_log_key_not_valid_yet_or_without_a_start_is_not_used(
    tmp_path: Path, section: str
) -> None:
    instance = PrivateSigstore.create()
    artifact = random_bytes()
    document = instance.sign(artifact, identity=IDENTITY)
    digest = hashlib.sha256(artifact).digest()
    periods = {
        "later": {"start": "2999-01-01T00:00:00Z"},
        "no start": {"end": "2999-01-01T00:00:00Z"},
    }
    for label, valid_for in periods.items():
        root = instance.trusted_root()
        for log in root[section]:
            log["publicKey"]["validFor"] = valid_for
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps(root))
        assert _direct(document, digest, path) is None, label
        assert _sigstore(document, digest, path) is None, label
