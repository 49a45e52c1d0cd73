"""What a signing certificate says, and every rule of an author entry, one by one.

Certificates are built with ``cryptography`` carrying exactly the claims a case needs: the
Fulcio v2 extensions (DER UTF8String), the v1 ones (raw bytes), only a SAN, claims of 128
bytes and more (DER long-form length). The author policy is applied to them directly, so a
rule switched off or inverted fails a test here (the mutation score of
``trust/verifiers/claims.py`` rests on this file and ``test_gh_stricter.py``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from support.private_sigstore import der_utf8_string

from nexo_pkg.trust.base import (
    SignatureInvalidError,
    SignerUntrustedError,
    TrustRequest,
)
from nexo_pkg.trust.policy import AuthorPolicy
from nexo_pkg.trust.verifiers import claims
from nexo_pkg.trust.verifiers.claims import (
    Signer,
    TrustedAuthors,
    UntrustedSignerError,
    accept_verified,
    binding_reason,
    rejection_reason,
    require_log_entry,
    untrusted_signer_error,
)

ISSUER = "https://token.actions.githubusercontent.com"
WORKFLOW = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1.2.3"
SHARED = "https://github.com/acme/workflows/.github/workflows/build.yml@refs/heads/main"
PATTERN = r"https://github\.com/acme/[^/]+/\.github/workflows/[^@]+@refs/.*"
_KEY = ec.generate_private_key(ec.SECP256R1())

V2 = {
    claims.OIDC_ISSUER_V2: ISSUER,
    claims.SOURCE_REPOSITORY_URI: "https://github.com/acme/echo",
    claims.SOURCE_REPOSITORY_REF: "refs/tags/v1.2.3",
    claims.BUILD_SIGNER_URI: WORKFLOW,
    claims.BUILD_CONFIG_URI: WORKFLOW,
    claims.RUNNER_ENVIRONMENT: "github-hosted",
    claims.SOURCE_REPOSITORY_OWNER_URI: "https://github.com/acme",
}


def certificate(
    *names: x509.GeneralName | str,
    v2: dict[x509.ObjectIdentifier, str] | None = None,
    raw: dict[x509.ObjectIdentifier, bytes] | None = None,
) -> x509.Certificate:
    """A certificate with SANs ``names`` (strings are URIs), the v2 claims ``v2`` (DER
    UTF8String) and the extensions ``raw`` as given."""
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([]))
        .issuer_name(x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "test")]))
        .public_key(_KEY.public_key())
        .serial_number(1)
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(minutes=10))
    )
    if names:
        general = [x509.UniformResourceIdentifier(n) if isinstance(n, str) else n for n in names]
        builder = builder.add_extension(x509.SubjectAlternativeName(general), critical=False)
    extensions = {oid: der_utf8_string(text) for oid, text in (v2 or {}).items()}
    extensions.update(raw or {})
    for oid, value in extensions.items():
        builder = builder.add_extension(x509.UnrecognizedExtension(oid, value), critical=False)
    return builder.sign(_KEY, hashes.SHA256())


def signer(*names: x509.GeneralName | str, **overrides: str | None) -> Signer:
    """The signer of a v2 certificate for ``WORKFLOW`` (claims changed by ``overrides``:
    an OID's attribute name in :mod:`claims`, ``None`` to drop it)."""
    v2 = dict(V2)
    for name, value in overrides.items():
        oid = getattr(claims, name.upper())
        if value is None:
            v2.pop(oid)
        else:
            v2[oid] = value
    return Signer.from_certificate(certificate(*(names or (WORKFLOW,)), v2=v2))


def author(**fields: object) -> AuthorPolicy:
    values: dict[str, object] = {"owner": "acme"}
    if "identity" not in fields:
        values["identity_regexp"] = PATTERN
    values.update(fields)
    return AuthorPolicy(**values)  # type: ignore[arg-type]


ECHO = TrustRequest(owner="acme", repo="echo")


# --- reading the certificate -------------------------------------------------------------------


def test_v2_claims_are_read() -> None:
    found = signer()
    assert found.identities == (WORKFLOW,)
    assert found.identity == WORKFLOW
    assert found.san == WORKFLOW
    assert found.issuer == ISSUER
    assert found.repository == "acme/echo"
    assert found.owner == "acme"
    assert found.source_ref == "refs/tags/v1.2.3"
    assert found.tag == "v1.2.3"
    assert found.signer_workflow == "acme/echo/.github/workflows/release.yml"
    assert found.claims() == {
        "source_repository": "acme/echo",
        "source_ref": "refs/tags/v1.2.3",
        "signer_workflow": "acme/echo/.github/workflows/release.yml",
        "build_config_uri": WORKFLOW,
        "runner_environment": "github-hosted",
    }
    verified = found.verified("sigstore-bundle", "x.sigstore.json")
    assert (verified.identity, verified.issuer, verified.scheme, verified.material) == (
        WORKFLOW,
        ISSUER,
        "sigstore-bundle",
        "x.sigstore.json",
    )
    assert verified.claims == found.claims()


def test_v1_claims_are_read_without_the_v2_extensions() -> None:
    """A certificate from before Fulcio's v2 extensions: issuer, repository and ref from the
    raw v1 extensions."""
    cert = certificate(
        WORKFLOW,
        raw={
            claims.OIDC_ISSUER_V1: ISSUER.encode(),
            claims.GITHUB_WORKFLOW_REPOSITORY: b"acme/old",
            claims.GITHUB_WORKFLOW_REF: b"refs/heads/main",
        },
    )
    found = Signer.from_certificate(cert)
    assert found.issuer == ISSUER
    assert found.repository == "acme/old"
    assert found.owner == "acme"
    assert found.source_ref == "refs/heads/main"
    assert found.tag is None
    assert found.build_signer_uri is None
    assert found.signer_workflow is None
    assert found.reusable_workflow_elsewhere() is None


def test_the_subject_url_is_the_last_fallback() -> None:
    """No claims at all: repository and ref from the first ``https://`` SAN."""
    cert = certificate(x509.RFC822Name("a@example.com"), "spiffe://x/y", WORKFLOW)
    found = Signer.from_certificate(cert)
    assert found.identities == ("a@example.com", "spiffe://x/y", WORKFLOW)
    assert found.issuer is None
    assert found.repository == "acme/echo"
    assert found.source_ref == "refs/tags/v1.2.3"
    assert found.owner == "acme"


def test_a_v1_repository_that_is_not_owner_slash_name_falls_back_to_the_san() -> None:
    cert = certificate(
        WORKFLOW,
        raw={
            claims.GITHUB_WORKFLOW_REPOSITORY: b"acme/echo/extra",
            claims.GITHUB_WORKFLOW_REF: b"",
        },
    )
    found = Signer.from_certificate(cert)
    assert found.repository == "acme/echo"
    # An empty v1 ref is no ref, and the SAN is not read for it then.
    assert found.source_ref is None


def test_no_claims_no_repository() -> None:
    found = Signer.from_certificate(certificate("https://example.com/", x509.RFC822Name("a@b.c")))
    assert found.repository is None
    assert found.owner is None
    assert found.source_ref is None
    assert found.claims()["source_repository"] is None
    bare = Signer.from_certificate(certificate())
    assert bare.identities == ()
    assert bare.identity == "<no identity>"
    assert bare.san == "<no identity>"


def test_a_ref_holding_an_at_sign() -> None:
    """Git allows "@" in a branch name; the workflow's path ends at the first one."""
    uri = "https://github.com/acme/echo/.github/workflows/release.yml@refs/heads/a@b"
    found = Signer.from_certificate(certificate(uri, v2={claims.BUILD_SIGNER_URI: uri}))
    assert found.source_ref == "refs/heads/a@b"
    assert found.signer_workflow == "acme/echo/.github/workflows/release.yml"


def test_workflow_paths_keep_their_characters() -> None:
    uri = "https://github.com/Xacme/echo/.github/workflows/X@refs/heads/main"
    assert signer(build_signer_uri=uri).signer_workflow == "Xacme/echo/.github/workflows/X"


def test_a_san_without_a_ref_gives_no_ref() -> None:
    found = Signer.from_certificate(certificate("https://github.com/acme/echo/x.yml"))
    assert found.source_ref is None
    assert found.repository == "acme/echo"


@pytest.mark.parametrize("size", [127, 128, 255, 256, 70000])
def test_claims_of_any_length_are_read(size: int) -> None:
    """DER lengths of one byte (< 128) and the long forms of one, two and three bytes."""
    long_ref = "refs/tags/v" + "1" * (size - len("refs/tags/v"))
    uri = "https://github.com/acme/" + "e" * max(1, size - len("https://github.com/acme/"))
    found = signer(source_repository_ref=long_ref, source_repository_uri=uri)
    assert found.source_ref == long_ref
    assert found.repository == "acme/" + uri.rpartition("/")[2]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"\x0c\x03abc", "abc"),
        (b"\x0c\x81\x03abc", "abc"),
        (b"\x0c\x82\x00\x03abc", "abc"),
        (b"\x0c\x00", ""),
        (b"\x0c\x81\x00", ""),
        (b"\x0c\x84\x00\x00\x00\x03abc", "abc"),  # four length bytes, the most read
        (b"\x0c\x80", None),  # indefinite length, no content
        (b"\x13\x03abc", None),  # PrintableString, not UTF8String
        (b"\x0c", None),  # no length
        (b"", None),
        (b"\x0c\x04abc", None),  # short
        (b"\x0c\x02abc", None),  # trailing byte
        (b"\x0c\x80abc", None),  # indefinite length
        (b"\x0c\x85\x00\x00\x00\x00\x03abc", None),  # more length bytes than read
        (b"\x0c\x82\x00", None),  # length bytes cut
        (b"\x0c\x81", None),
        (b"\x0c\x02\xff\xfe", None),  # not UTF-8
    ],
)
def test_der_utf8_strings(raw: bytes, expected: str | None) -> None:
    assert claims._der_utf8_string(raw) == expected


def test_a_raw_v1_claim_that_is_not_utf8_is_no_claim() -> None:
    cert = certificate(WORKFLOW, raw={claims.OIDC_ISSUER_V1: b"\xff\xfe"})
    assert Signer.from_certificate(cert).issuer is None


def test_the_v2_issuer_wins_over_v1() -> None:
    cert = certificate(
        WORKFLOW,
        v2={claims.OIDC_ISSUER_V2: ISSUER},
        raw={claims.OIDC_ISSUER_V1: b"https://other.example"},
    )
    assert Signer.from_certificate(cert).issuer == ISSUER


def test_sigstore_othername_sans_are_identities() -> None:
    other = x509.OtherName(claims.SIGSTORE_OTHERNAME, der_utf8_string("acme@ci"))
    foreign = x509.OtherName(x509.ObjectIdentifier("1.2.3.4"), der_utf8_string("no"))
    broken = x509.OtherName(claims.SIGSTORE_OTHERNAME, b"\x13\x02no")
    found = Signer.from_certificate(certificate(foreign, broken, other, x509.DNSName("x.y")))
    assert found.identities == ("acme@ci",)


def test_owner_from_the_owner_uri_claim() -> None:
    found = signer(source_repository_owner_uri="https://github.com/Other/")
    assert found.owner == "Other"
    assert signer(source_repository_owner_uri="https://github.com/").owner is None


def test_reusable_workflow_elsewhere() -> None:
    assert signer().reusable_workflow_elsewhere() is None
    # A reusable workflow of the same repository (another file): not elsewhere.
    same = signer(build_signer_uri="https://github.com/acme/echo/.github/workflows/x.yml@r")
    assert same.reusable_workflow_elsewhere() is None
    # Case differs: GitHub names are case-insensitive.
    assert (
        signer(build_signer_uri=WORKFLOW.replace("acme", "ACME")).reusable_workflow_elsewhere()
        is None
    )
    elsewhere = signer(build_signer_uri=SHARED)
    assert elsewhere.reusable_workflow_elsewhere() == "acme/workflows/.github/workflows/build.yml"
    assert signer(build_signer_uri=SHARED, source_repository_uri=None).repository == "acme/echo"
    no_repo = Signer.from_certificate(
        certificate("https://example.com/", v2={claims.BUILD_SIGNER_URI: SHARED})
    )
    assert no_repo.reusable_workflow_elsewhere() is None
    assert signer(build_signer_uri="https://github.com/").signer_workflow is None


def test_identity_candidates() -> None:
    caller = "https://github.com/acme/echo/.github/workflows/call.yml@refs/tags/v1"
    assert signer(build_config_uri=caller).identity_candidates() == (WORKFLOW, caller)
    assert signer().identity_candidates() == (WORKFLOW,)  # the same, not twice
    assert signer(build_config_uri=None).identity_candidates() == (WORKFLOW,)


# --- the author policy ------------------------------------------------------------------------


def test_a_matching_entry_trusts() -> None:
    assert rejection_reason(author(), signer(), ECHO) is None


def test_issuer() -> None:
    reason = rejection_reason(author(oidc_issuer="https://gitlab.com"), signer(), ECHO)
    assert reason == f"issuer {ISSUER!r} is not 'https://gitlab.com'"


def test_identity() -> None:
    reason = rejection_reason(author(identity="https://x"), signer(), ECHO)
    assert reason == f"identity {WORKFLOW} does not match identity 'https://x'"
    caller = "https://github.com/acme/echo/.github/workflows/call.yml@refs/tags/v1"
    reason = rejection_reason(author(identity="https://x"), signer(build_config_uri=caller), ECHO)
    assert reason == f"identity {WORKFLOW}, {caller} does not match identity 'https://x'"
    bare = Signer.from_certificate(certificate(v2={claims.OIDC_ISSUER_V2: ISSUER}))
    assert rejection_reason(author(), bare, ECHO) == (
        f"identity none does not match identity_regexp '{PATTERN}'"
    )


def test_a_pattern_is_shown_as_the_policy_file_holds_it() -> None:
    """Not as Python's repr writes it: a backslash in the pattern is shown once, not twice."""
    reason = rejection_reason(author(identity_regexp=r"https://x\.y/.*"), signer(), ECHO)
    assert reason == f"identity {WORKFLOW} does not match identity_regexp 'https://x\\.y/.*'"
    quoted = rejection_reason(author(identity="https://x/it's"), signer(), ECHO)
    assert quoted == f'identity {WORKFLOW} does not match identity "https://x/it\'s"'


def test_the_starting_workflow_may_be_the_identity() -> None:
    caller = "https://github.com/acme/echo/.github/workflows/call.yml@refs/tags/v1.2.3"
    reusable = signer(WORKFLOW.replace("release", "shared"), build_config_uri=caller,
                      build_signer_uri=WORKFLOW.replace("release", "shared"))  # fmt: skip
    assert rejection_reason(author(identity=caller), reusable, ECHO) is None


def test_a_reusable_workflow_elsewhere_must_be_named() -> None:
    caller = "https://github.com/acme/echo/.github/workflows/call.yml@refs/tags/v1.2.3"
    reusable = signer(SHARED, build_config_uri=caller, build_signer_uri=SHARED)
    reason = rejection_reason(author(identity=caller), reusable, ECHO)
    assert reason is not None
    assert "name it (signer_workflow = 'acme/workflows/.github/workflows/build.yml')" in reason
    named = author(identity=caller, signer_workflow="acme/workflows/.github/workflows/build.yml")
    assert rejection_reason(named, reusable, ECHO) is None
    # Matching the SAN (the reusable workflow itself) is naming it.
    assert rejection_reason(author(identity=SHARED), reusable, ECHO) is None


def test_the_owner_is_always_bound() -> None:
    evil = signer(source_repository_uri="https://github.com/evil/echo",
                  source_repository_owner_uri="https://github.com/evil")  # fmt: skip
    expected = "it was built in evil/echo, outside owner acme"
    for request in (ECHO, TrustRequest(), TrustRequest(owner="acme")):
        assert rejection_reason(author(), evil, request) == expected
        assert rejection_reason(author(allow_republish=True), evil, request) == expected
    # The owner claim and the repository must both be the owner's.
    lying = signer(source_repository_owner_uri="https://github.com/evil")
    assert (
        rejection_reason(author(), lying, ECHO) == "it was built in acme/echo, outside owner acme"
    )
    mixed = signer(source_repository_uri="https://github.com/evil/echo")
    assert rejection_reason(author(), mixed, ECHO) == expected
    assert rejection_reason(author(owner="ACME"), signer(), ECHO) is None


def test_no_source_repository_binds_no_owner() -> None:
    found = Signer.from_certificate(
        certificate("https://example.com/", v2={claims.OIDC_ISSUER_V2: ISSUER})
    )
    reason = rejection_reason(author(identity="https://example.com/"), found, TrustRequest())
    assert reason == (
        "the certificate names no source repository, so nothing binds it to owner acme"
    )


def test_an_owner_claim_without_a_repository_binds_nothing() -> None:
    owner_only = Signer.from_certificate(
        certificate("spiffe://x", v2={claims.OIDC_ISSUER_V2: ISSUER,
                                     claims.SOURCE_REPOSITORY_OWNER_URI: "https://github.com/acme"})
    )  # fmt: skip
    assert (owner_only.repository, owner_only.owner) == (None, "acme")
    unnamed = signer(source_repository_owner_uri="https://github.com/")
    assert (unnamed.repository, unnamed.owner) == ("acme/echo", None)
    expected = "the certificate names no source repository, so nothing binds it to owner acme"
    assert rejection_reason(author(identity="spiffe://x"), owner_only, ECHO) == expected
    assert rejection_reason(author(), unnamed, ECHO) == expected


def test_repos() -> None:
    assert rejection_reason(author(repos=("echo",)), signer(), ECHO) is None
    assert rejection_reason(author(repos=("ECHO", "x")), signer(), ECHO) is None
    assert rejection_reason(author(repos=("other",)), signer(), ECHO) == (
        "repository acme/echo is not one of acme/other"
    )
    assert rejection_reason(author(repos=("a", "b")), signer(), ECHO) == (
        "repository acme/echo is not one of acme/a, acme/b"
    )


def test_signer_workflow() -> None:
    assert (
        rejection_reason(
            author(signer_workflow="acme/echo/.github/workflows/release.yml"), signer(), ECHO
        )
        is None
    )
    # As gh compares it: the owner or repository in another case is not the signer.
    reason = rejection_reason(
        author(signer_workflow="ACME/echo/.github/workflows/release.yml"), signer(), ECHO
    )
    assert reason == (
        "signer workflow acme/echo/.github/workflows/release.yml is not "
        "ACME/echo/.github/workflows/release.yml (compared exactly as the certificate writes it)"
    )
    reason = rejection_reason(
        author(signer_workflow="acme/echo/.github/workflows/x.yml"), signer(), ECHO
    )
    assert reason == (
        "signer workflow acme/echo/.github/workflows/release.yml is not "
        "acme/echo/.github/workflows/x.yml"
    )
    # The path names a file of the repository: another case is another workflow.
    reason = rejection_reason(
        author(signer_workflow="acme/echo/.github/workflows/Release.yml"), signer(), ECHO
    )
    assert reason == (
        "signer workflow acme/echo/.github/workflows/release.yml is not "
        "acme/echo/.github/workflows/Release.yml (compared exactly as the certificate writes it)"
    )
    no_workflow = signer(build_signer_uri=None)
    assert rejection_reason(author(signer_workflow="a/b/c"), no_workflow, ECHO) == (
        "signer workflow none is not a/b/c"
    )


def test_source_ref_is_enforced() -> None:
    assert rejection_reason(author(source_ref=r"refs/tags/v.*"), signer(), ECHO) is None
    reason = rejection_reason(author(source_ref="refs/heads/main"), signer(), ECHO)
    assert reason == "source ref refs/tags/v1.2.3 does not match 'refs/heads/main'"
    # A whole match: a prefix is not enough.
    assert rejection_reason(author(source_ref="refs/tags/v1"), signer(), ECHO) is not None
    no_ref = Signer.from_certificate(
        certificate("https://github.com/acme/echo/x", v2={claims.OIDC_ISSUER_V2: ISSUER})
    )
    assert rejection_reason(author(identity="https://github.com/acme/echo/x", source_ref=".*"),
                            no_ref, ECHO) is None  # fmt: skip
    assert rejection_reason(author(identity="https://github.com/acme/echo/x", source_ref=".+"),
                            no_ref, ECHO) == "source ref none does not match '.+'"  # fmt: skip


def test_predicate_type() -> None:
    slsa = "https://slsa.dev/provenance/v1"
    assert rejection_reason(author(), signer(), ECHO, predicate_type=slsa) is None
    reason = rejection_reason(author(), signer(), ECHO, predicate_type="https://x/v1")
    assert reason == f"the attestation's predicate type https://x/v1 is not {slsa}"
    assert rejection_reason(author(predicate_type="https://x/v1"), signer(), ECHO,
                            predicate_type="https://x/v1") is None  # fmt: skip


def test_the_repository_installed_from() -> None:
    other = TrustRequest(owner="acme", repo="copy")
    reason = rejection_reason(author(), signer(), other)
    assert reason is not None
    assert reason == (
        "it was built in acme/echo, not in acme/copy being installed from (set "
        "`allow_republish = true` on the author entry to trust republished artifacts)"
    )
    # The same reason in the refusal.
    refused = untrusted_signer_error(signer(), replace(other, authors=(author(),)), "x")
    assert refused.message.endswith(f"which is not trusted: {reason}")
    assert rejection_reason(author(allow_republish=True), signer(), other) is None
    assert rejection_reason(author(), signer(), TrustRequest(owner="acme", repo="ECHO")) is None
    assert rejection_reason(author(), signer(), TrustRequest(owner="ACME")) is None
    # Another owner named by the request: the signer is outside it.
    assert rejection_reason(author(), signer(), TrustRequest(owner="someone")) == (
        "it was built in acme/echo, outside owner someone"
    )


def test_the_tag_installed() -> None:
    assert binding_reason(signer(), TrustRequest(tag="v1.2.3")) is None
    assert binding_reason(signer(), TrustRequest()) is None
    assert (
        binding_reason(signer(source_repository_ref="refs/heads/main"), TrustRequest(tag="v2"))
        is None
    )
    reason = binding_reason(signer(), TrustRequest(tag="v2.0.0"))
    assert reason == (
        "it was signed for tag v1.2.3, not for v2.0.0 being installed (a signature of another "
        "release cannot vouch for this one)"
    )


def test_trusted_authors_take_the_first_entry_that_trusts() -> None:
    cert = certificate(x509.RFC822Name("a@b.c"), WORKFLOW, v2=V2)
    request = TrustRequest(
        authors=(author(identity="https://x"), author()), owner="acme", repo="echo"
    )
    policy = TrustedAuthors(request)
    policy.verify(cert)
    assert policy.accepted is not None
    assert policy.accepted.identity == WORKFLOW  # the SAN that matched, not the first SAN
    # A starting-workflow identity records the SAN.
    caller = "https://github.com/acme/echo/.github/workflows/call.yml@refs/tags/v1.2.3"
    by_caller = TrustedAuthors(TrustRequest(authors=(author(identity=caller),)))
    by_caller.verify(certificate(WORKFLOW, v2={**V2, claims.BUILD_CONFIG_URI: caller}))
    assert by_caller.accepted is not None
    assert by_caller.accepted.identity == WORKFLOW


def test_trusted_authors_refuse() -> None:
    with pytest.raises(UntrustedSignerError) as nobody:
        TrustedAuthors(TrustRequest()).verify(certificate(WORKFLOW, v2=V2))
    assert str(nobody.value) == "no trusted author accepts the signing certificate"
    with pytest.raises(UntrustedSignerError) as bound:
        TrustedAuthors(TrustRequest(authors=(author(),), tag="v9")).verify(
            certificate(WORKFLOW, v2=V2)
        )
    assert str(bound.value) == "the signature is bound to another release"
    attestation = TrustedAuthors(TrustRequest(authors=(author(),)), predicate_type="https://x")
    with pytest.raises(UntrustedSignerError):
        attestation.verify(certificate(WORKFLOW, v2=V2))
    assert attestation.accepted is None


def test_untrusted_signer_errors_say_why() -> None:
    found = signer()
    error = untrusted_signer_error(found, TrustRequest(), "x.json")
    assert isinstance(error, SignerUntrustedError)
    assert error.message == (
        f"x.json is signed by {WORKFLOW} (issuer {ISSUER}), which is not trusted: "
        "the trust policy has no [[authors]] entry"
    )
    assert error.details["repository"] == "acme/echo"
    assert error.details["claims"] == found.claims()
    assert error.details["bound"] is None
    assert (error.identity, error.issuer) == (WORKFLOW, ISSUER)
    assert untrusted_signer_error(found, ECHO, "x").message.endswith(
        "the trust policy has no [[authors]] entry for owner 'acme'"
    )
    two = TrustRequest(authors=(author(identity="https://a"), author(repos=("b",))), owner="acme")
    assert untrusted_signer_error(found, two, "x").message.endswith(
        "identity " + WORKFLOW + " does not match identity 'https://a'; "
        "repository acme/echo is not one of acme/b"
    )
    bound = untrusted_signer_error(found, TrustRequest(authors=(author(),), tag="v2"), "x")
    assert bound.details["bound"] is not None
    assert "signed for tag v1.2.3" in bound.message
    typed = untrusted_signer_error(
        found, TrustRequest(authors=(author(),)), "x", predicate_type="https://x"
    )
    assert typed.message.endswith("is not https://slsa.dev/provenance/v1")


def test_accept_verified() -> None:
    cert = certificate(WORKFLOW, v2=V2)
    seen: list[str] = []
    trusting = TrustRequest(authors=(author(),))
    accepted = accept_verified(cert, trusting, name="x", verified="payload", check=seen.append)
    assert seen == ["payload"]
    assert accepted.identity == WORKFLOW
    with pytest.raises(SignerUntrustedError) as caught:
        accept_verified(cert, TrustRequest(authors=(author(),)), name="x", verified=None,
                        predicate_type="https://x")  # fmt: skip
    assert caught.value.message.startswith(f"x is signed by {WORKFLOW} (issuer {ISSUER})")
    assert caught.value.message.endswith("is not https://slsa.dev/provenance/v1")

    def refuse(_: object) -> None:
        raise SignatureInvalidError("about another file")

    with pytest.raises(SignatureInvalidError, match="another file"):
        accept_verified(cert, TrustRequest(), name="x", verified=None, check=refuse)


def test_require_log_entry() -> None:
    require_log_entry({"verificationMaterial": {"tlogEntries": [{}]}}, "x")
    require_log_entry({}, "x")
    with pytest.raises(SignatureInvalidError) as plain:
        require_log_entry({"verificationMaterial": {"tlogEntries": []}}, "x")
    assert plain.value.message == (
        "x has no transparency-log entry; nexo-pkg verifies only bundles logged in a Sigstore "
        "transparency log"
    )
    stamped: dict[str, Any] = {
        "verificationMaterial": {"timestampVerificationData": {"rfc3161Timestamps": [{}]}}
    }
    with pytest.raises(SignatureInvalidError) as timestamped:
        require_log_entry(stamped, "x")
    assert timestamped.value.message == (
        "x has no transparency-log entry (it comes from GitHub's Sigstore instance for private "
        "repositories, which signs with RFC 3161 timestamps only); nexo-pkg verifies only "
        "bundles logged in a Sigstore transparency log"
    )
