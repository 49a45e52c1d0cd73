"""Property: a mutated bundle is refused with a signature kind, never crashes the verifier."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.private_sigstore import BUNDLE_V01, BUNDLE_V02, PrivateSigstore

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.api import AuthorPolicy, TrustPolicy, verify_asset_signature

from .helpers import ACME_IDENTITY, edited, text_edits

ARTIFACT = b"plugin tarball bytes " * 64

_INSTANCE = PrivateSigstore.create()


def _documents() -> list[str]:
    modern = _INSTANCE.sign(ARTIFACT, identity=ACME_IDENTITY)
    promise_only = _INSTANCE.sign(ARTIFACT, identity=ACME_IDENTITY, media_type=BUNDLE_V02)
    promise_only["mediaType"] = BUNDLE_V01
    del promise_only["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    legacy, _, _ = _INSTANCE.sign_legacy(ARTIFACT, identity=ACME_IDENTITY)
    return [json.dumps(document) for document in (modern, promise_only, legacy)]


DOCUMENTS = _documents()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    which=st.integers(min_value=0, max_value=len(DOCUMENTS) - 1),
    edits=text_edits(max_size=4),
)
def test_mutations_fail_closed(tmp_path: Path, which: int, edits: list[tuple[float, str]]) -> None:
    mutated = edited(DOCUMENTS[which], edits)
    root = _INSTANCE.write_trusted_root(tmp_path / "trusted_root.json")
    artifact = tmp_path / "echo.tar.gz"
    artifact.write_bytes(ARTIFACT)
    bundle = tmp_path / "echo.tar.gz.bundle"
    bundle.write_text(mutated)
    policy = TrustPolicy(
        default="require",
        authors=(AuthorPolicy(owner="acme", identity=ACME_IDENTITY),),
        trusted_root=root,
    )
    result: str
    try:
        outcome = verify_asset_signature(
            artifact,
            asset_name=artifact.name,
            material={bundle.name: bundle},
            owner="acme",
            repo="nexo-plugin-echo",
            policy=policy,
            mode="require",
        )
        # An edit may leave the signed content intact (a no-op, or a base64 character in
        # padding bits); then it verifies as the same signer.
        result = f"verified:{outcome.identity}"
    except NexoError as error:
        result = error.kind
    assert result in {"signature_invalid", "signer_untrusted", f"verified:{ACME_IDENTITY}"}
