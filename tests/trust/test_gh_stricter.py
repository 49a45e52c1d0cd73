"""Where ``gh attestation verify`` is stricter than sigstore-python, nexo-pkg is too.

Bundles minted by the private Sigstore instance (real certificates, SCTs, log proofs):

* the owner is always bound: a certificate whose source repository belongs to another owner
  (``evil/repo`` calling ``acme``'s reusable workflow) is refused by an ``acme`` entry on every
  path — no owner known (local tarball, registry copy without origin), ``trust verify``
  without ``--owner``/``--repo``, and with ``allow_republish``;
* a Fulcio CA or Rekor key the trusted root retires (``validFor.end``) vouches for nothing
  integrated after that end;
* a log entry's ``logId`` must name a log key of the trusted root;
* the public-good root read offline is the one shipped in sigstore-python unless the cached
  one verifies against the local TUF metadata; ``--verbose`` names it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from support.cli import nexo
from support.private_sigstore import PrivateSigstore, random_bytes, write_bundle
from support.tarballs import write_plugin

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust.api import AuthorPolicy, TrustPolicy, verify_asset_signature

from .helpers import ACME_IDENTITY, ACME_REGEXP, cli_env, write_acme_policy

SHARED_WORKFLOW = "https://github.com/acme/workflows/.github/workflows/release.yml@refs/tags/v1.2.3"
EVIL_CALLER = "https://github.com/evil/repo/.github/workflows/call.yml@refs/tags/v1.2.3"
ASSET = "echo-1.2.3-noarch.tar.gz"


def _verify(
    artifact: Path,
    bundle: dict[str, Any],
    root: Path,
    *,
    owner: str | None,
    repo: str | None,
    author: AuthorPolicy | None = None,
    suffix: str = ".sigstore.json",
) -> str:
    """The outcome's status, or the error kind."""
    path = write_bundle(artifact.parent / (ASSET + suffix), bundle)
    policy = TrustPolicy(
        default="require",
        authors=(author or AuthorPolicy(owner="acme", identity_regexp=ACME_REGEXP),),
        trusted_root=root,
    )
    try:
        outcome = verify_asset_signature(
            artifact,
            asset_name=ASSET,
            material={path.name: path},
            owner=owner,
            repo=repo,
            policy=policy,
            mode="require",
        )
    except NexoError as error:
        return error.kind
    return outcome.status


@pytest.fixture
def artifact(tmp_path: Path) -> Path:
    path = tmp_path / ASSET
    path.write_bytes(random_bytes())
    return path


# --- 1. owner binding ---------------------------------------------------------------------

REPUBLISH = AuthorPolicy(owner="acme", identity_regexp=ACME_REGEXP, allow_republish=True)
PLAIN = AuthorPolicy(owner="acme", identity_regexp=ACME_REGEXP)


@pytest.mark.parametrize(
    ("owner", "repo", "author"),
    [
        (None, None, PLAIN),  # a local tarball, a registry copy without origin annotation
        (None, None, REPUBLISH),
        ("acme", None, REPUBLISH),
        ("acme", "workflows", REPUBLISH),
        ("acme", "nexo-plugin-echo", REPUBLISH),
    ],
    ids=["no-owner", "no-owner-republish", "owner-republish", "repo-republish", "other-repo"],
)
@pytest.mark.parametrize("kind", ["attestation", "bundle", "legacy"])
def test_another_owners_repository_calling_the_owners_workflow_is_refused(
    *,
    private_sigstore: PrivateSigstore,
    private_root: Path,
    artifact: Path,
    owner: str | None,
    repo: str | None,
    author: AuthorPolicy,
    kind: str,
) -> None:
    content = artifact.read_bytes()
    if kind == "attestation":
        bundle = private_sigstore.attest(
            content, identity=SHARED_WORKFLOW, repository="evil/repo", build_config_uri=EVIL_CALLER
        )
    elif kind == "bundle":
        bundle = private_sigstore.sign(content, identity=SHARED_WORKFLOW, repository="evil/repo")
    else:
        bundle = private_sigstore.sign_legacy(
            content, identity=SHARED_WORKFLOW, repository="evil/repo"
        )[0]
    suffix = ".bundle" if kind == "legacy" else ".sigstore.json"
    assert (
        _verify(
            artifact, bundle, private_root, owner=owner, repo=repo, author=author, suffix=suffix
        )
        == "signer_untrusted"
    )
    # The control: the same workflow run for acme's own repository is acme's release.
    if kind == "attestation":
        own = private_sigstore.attest(
            content, identity=SHARED_WORKFLOW, repository="acme/workflows"
        )
    elif kind == "bundle":
        own = private_sigstore.sign(content, identity=SHARED_WORKFLOW, repository="acme/workflows")
    else:
        own = private_sigstore.sign_legacy(
            content, identity=SHARED_WORKFLOW, repository="acme/workflows"
        )[0]
    assert _verify(
        artifact, own, private_root, owner=owner, repo=repo, author=author, suffix=suffix
    ) == ("verified")


def test_a_reusable_workflow_of_the_same_repository_is_accepted(
    private_sigstore: PrivateSigstore, private_root: Path, artifact: Path
) -> None:
    """acme/nexo-plugin-echo's release calls a reusable workflow of its own repository: the
    signer workflow lives in the source repository, so naming the calling workflow is enough."""
    signer = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/shared.yml@refs/tags/v1.2.3"
    )
    bundle = private_sigstore.attest(
        artifact.read_bytes(),
        identity=signer,
        repository="acme/nexo-plugin-echo",
        build_config_uri=ACME_IDENTITY,
    )
    author = AuthorPolicy(owner="acme", identity=ACME_IDENTITY)
    status = _verify(
        artifact, bundle, private_root, owner="acme", repo="nexo-plugin-echo", author=author
    )
    assert status == "verified"
    # Another repository's reusable workflow named only by its caller is refused (as gh).
    elsewhere = private_sigstore.attest(
        artifact.read_bytes(),
        identity=SHARED_WORKFLOW,
        repository="acme/nexo-plugin-echo",
        build_config_uri=ACME_IDENTITY,
    )
    status = _verify(
        artifact, elsewhere, private_root, owner="acme", repo="nexo-plugin-echo", author=author
    )
    assert status == "signer_untrusted"


def _install_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NEXO_HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
    }


def test_a_local_tarball_signed_for_another_owner_is_not_installed(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = write_acme_policy(tmp_path / "trusted_keys.toml", ACME_REGEXP, allow_republish=True)
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    bundle = private_sigstore.sign(
        tarball.read_bytes(), identity=SHARED_WORKFLOW, repository="evil/repo"
    )
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    result = nexo("plugin", "install", str(tarball), "--yes", "--json", "--trusted-keys",
                  str(policy), "--require-signature", env=_install_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "signer_untrusted"
    assert "outside owner acme" in document["error"]
    assert "Traceback" not in result.stderr
    plugins = tmp_path / "home" / "state" / "plugins"
    assert not plugins.exists() or not any(plugins.iterdir())


def test_trust_verify_without_owner_or_repo_binds_the_entrys_owner(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ntrusted_root = "private_trusted_root.json"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{ACME_REGEXP}'\n",
        encoding="utf-8",
    )
    artifact = tmp_path / "artifact.bin"
    artifact.write_bytes(random_bytes())
    bundle = write_bundle(
        tmp_path / "artifact.bin.sigstore.json",
        private_sigstore.attest(
            artifact.read_bytes(),
            identity=SHARED_WORKFLOW,
            repository="evil/repo",
            build_config_uri=EVIL_CALLER,
        ),
    )
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(bundle),
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "signer_untrusted"
    assert "evil/repo, outside owner acme" in document["error"]


# --- 3. retired keys, 4. unknown logs -------------------------------------------------------


def _root_with(instance: PrivateSigstore, path: Path, edit: Any) -> Path:
    document = instance.trusted_root()
    edit(document)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("spelling", ["validFor", "valid_for"])
@pytest.mark.parametrize("which", ["tlogs", "certificateAuthorities"])
@pytest.mark.parametrize("kind", ["attestation", "bundle", "legacy"])
def test_a_retired_key_vouches_for_nothing_logged_after_its_end(
    *,
    private_sigstore: PrivateSigstore,
    tmp_path: Path,
    artifact: Path,
    which: str,
    kind: str,
    spelling: str,
) -> None:
    """The root's ``validFor`` may be spelt as in the ``.proto`` (``valid_for``): the same
    field to sigstore-python's models and gh, so the same retirement."""
    content = artifact.read_bytes()
    if kind == "attestation":
        bundle = private_sigstore.attest(content, identity=ACME_IDENTITY)
    elif kind == "bundle":
        bundle = private_sigstore.sign(content, identity=ACME_IDENTITY)
    else:
        bundle = private_sigstore.sign_legacy(content, identity=ACME_IDENTITY)[0]
    if kind == "legacy":
        integrated = datetime.fromtimestamp(bundle["rekorBundle"]["Payload"]["integratedTime"], UTC)
    else:
        entry = bundle["verificationMaterial"]["tlogEntries"][0]
        integrated = datetime.fromtimestamp(int(entry["integratedTime"]), UTC)
    suffix = ".bundle" if kind == "legacy" else ".sigstore.json"

    def retire(at: datetime) -> Any:
        def edit(document: dict[str, Any]) -> None:
            for item in document[which]:
                holder = item if which != "tlogs" else item["publicKey"]
                holder[spelling] = valid = holder.pop("validFor")
                valid["end"] = _stamp(at)

        return edit

    before = _root_with(
        private_sigstore, tmp_path / "retired.json", retire(integrated - timedelta(seconds=1))
    )
    status = _verify(artifact, bundle, before, owner="acme", repo="nexo-plugin-echo", suffix=suffix)
    assert status == "signature_invalid"
    after = _root_with(
        private_sigstore, tmp_path / "later.json", retire(integrated + timedelta(days=1))
    )
    status = _verify(artifact, bundle, after, owner="acme", repo="nexo-plugin-echo", suffix=suffix)
    assert status == "verified"


def _proto_name(document: Any, camel: str) -> Any:
    """``document`` with the field ``camel`` named as in the ``.proto`` (``integratedTime``
    becomes ``integrated_time``), which protobuf JSON readers (sigstore-python's models, gh)
    take as the same field."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    if isinstance(document, list):
        return [_proto_name(item, camel) for item in document]
    if isinstance(document, dict):
        return {
            (snake if key == camel else key): _proto_name(value, camel)
            for key, value in document.items()
        }
    return document


@pytest.mark.parametrize("field", ["integratedTime", "verificationMaterial", "logId"])
@pytest.mark.parametrize("kind", ["attestation", "bundle"])
def test_a_retired_log_key_is_refused_however_the_bundle_names_its_fields(
    *,
    private_sigstore: PrivateSigstore,
    private_root: Path,
    tmp_path: Path,
    artifact: Path,
    field: str,
    kind: str,
) -> None:
    """The checks gh adds read the log entry sigstore-python verifies: a bundle naming its
    fields as in the ``.proto`` (``integrated_time``, ``verification_material``) is the same
    bundle to sigstore-python and gh, and a retired key still vouches for nothing."""
    content = artifact.read_bytes()
    if kind == "attestation":
        bundle = private_sigstore.attest(content, identity=ACME_IDENTITY)
    else:
        bundle = private_sigstore.sign(content, identity=ACME_IDENTITY)
    entry = bundle["verificationMaterial"]["tlogEntries"][0]
    integrated = datetime.fromtimestamp(int(entry["integratedTime"]), UTC)

    def retire(document: dict[str, Any]) -> None:
        for item in document["tlogs"]:
            item["publicKey"]["validFor"]["end"] = _stamp(integrated - timedelta(seconds=1))

    root = _root_with(private_sigstore, tmp_path / "retired.json", retire)
    renamed = _proto_name(bundle, field)
    status = _verify(artifact, renamed, root, owner="acme", repo="nexo-plugin-echo")
    assert status == "signature_invalid"
    # The control: the renamed bundle verifies where the key is not retired.
    status = _verify(artifact, renamed, private_root, owner="acme", repo="nexo-plugin-echo")
    assert status == "verified"


def test_a_log_entry_must_name_a_log_of_the_trusted_root(
    private_sigstore: PrivateSigstore, private_root: Path, artifact: Path
) -> None:
    """The entry is signed by the trusted log key (SET, checkpoint), but its ``logId`` names
    another log: sigstore-python tries every key and accepts, gh refuses, so does nexo-pkg."""
    bundle = private_sigstore.sign(artifact.read_bytes(), identity=ACME_IDENTITY)
    entry = bundle["verificationMaterial"]["tlogEntries"][0]
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    spki = other.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
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
    signature = private_sigstore.rekor_key.sign(payload, ec.ECDSA(hashes.SHA256()))
    entry["inclusionPromise"] = {"signedEntryTimestamp": base64.b64encode(signature).decode()}
    # The checkpoint signed by the trusted key, under the other log's key hint.
    checkpoint = entry["inclusionProof"]["checkpoint"]
    note, _, signatures = checkpoint["envelope"].partition("\n\n")
    name = signatures.split(" ")[1]
    signed = private_sigstore.rekor_key.sign(note.encode() + b"\n", ec.ECDSA(hashes.SHA256()))
    hint = base64.b64encode(log_id[:4] + signed).decode()
    checkpoint["envelope"] = f"{note}\n\n\u2014 {name} {hint}\n"
    status = _verify(artifact, bundle, private_root, owner="acme", repo="nexo-plugin-echo")
    assert status == "signature_invalid"


def test_a_legacy_entry_must_name_a_log_of_the_trusted_root(
    private_sigstore: PrivateSigstore, private_root: Path, artifact: Path
) -> None:
    """cosign's ``rekorBundle``: its signed entry timestamp is signed by the trusted log key,
    but its ``logID`` names another log. cosign looks the log's key up by that ID and refuses,
    as gh does for a bundle; so does nexo-pkg. The unedited bundle verifies."""
    bundle = private_sigstore.sign_legacy(artifact.read_bytes(), identity=ACME_IDENTITY)[0]
    kept = _verify(artifact, bundle, private_root, owner="acme", repo="nexo-plugin-echo",
                   suffix=".bundle")  # fmt: skip
    assert kept == "verified"
    other = ec.generate_private_key(ec.SECP256R1()).public_key()
    spki = other.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    payload = bundle["rekorBundle"]["Payload"]
    payload["logID"] = hashlib.sha256(spki).hexdigest()
    signature = private_sigstore.rekor_key.sign(rfc8785.dumps(payload), ec.ECDSA(hashes.SHA256()))
    bundle["rekorBundle"]["SignedEntryTimestamp"] = base64.b64encode(signature).decode()
    status = _verify(artifact, bundle, private_root, owner="acme", repo="nexo-plugin-echo",
                     suffix=".bundle")  # fmt: skip
    assert status == "signature_invalid"


@pytest.mark.parametrize("key_id", ["", "!!!"], ids=["empty", "not-base64"])
def test_a_log_entry_naming_no_log_is_refused_saying_so(
    tmp_path: Path, private_sigstore: PrivateSigstore, artifact: Path, key_id: str
) -> None:
    """A ``logId.keyId`` that decodes to nothing (empty, or no base64 at all, which the bundle
    parser reads as empty) is one ``signature_invalid`` line that says the entry names no log,
    never an empty log name."""
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'schema_version = "1.0"\ntrusted_root = "private_trusted_root.json"\n\n'
        f"[[authors]]\nowner = \"acme\"\nidentity_regexp = '{ACME_REGEXP}'\n",
        encoding="utf-8",
    )
    bundle = private_sigstore.sign(artifact.read_bytes(), identity=ACME_IDENTITY)
    bundle["verificationMaterial"]["tlogEntries"][0]["logId"] = {"keyId": key_id}
    path = write_bundle(artifact.parent / (ASSET + ".sigstore.json"), bundle)
    refused = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(path),
                   "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                   in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stdout
    document = json.loads(refused.stdout)
    assert document["kind"] == "signature_invalid"
    assert "names no log (its logId.keyId is empty or not base64)" in document["error"]
    assert "names log ," not in document["error"]


def _unknown_field(document: dict[str, Any]) -> None:
    document["tlogs"][0]["surprise"] = True


def _log_without_base_url_always_valid(document: dict[str, Any]) -> None:
    """A log with no ``baseUrl`` and an empty ``validFor``: a hand-written reader took it for
    "always valid"; sigstore-python's models refuse both."""
    del document["tlogs"][0]["baseUrl"]
    document["tlogs"][0]["publicKey"]["validFor"] = {}


@pytest.mark.parametrize(
    "edit",
    [_unknown_field, _log_without_base_url_always_valid],
    ids=["unknown-field", "no-base-url"],
)
@pytest.mark.parametrize("kind", ["attestation", "bundle", "legacy"])
def test_a_root_sigstore_python_refuses_is_unusable_whatever_the_bundle(
    *,
    private_sigstore: PrivateSigstore,
    tmp_path: Path,
    artifact: Path,
    kind: str,
    edit: Any,
) -> None:
    content = artifact.read_bytes()
    if kind == "attestation":
        bundle = private_sigstore.attest(content, identity=ACME_IDENTITY)
    elif kind == "bundle":
        bundle = private_sigstore.sign(content, identity=ACME_IDENTITY)
    else:
        bundle = private_sigstore.sign_legacy(content, identity=ACME_IDENTITY)[0]

    root = _root_with(private_sigstore, tmp_path / "odd.json", edit)
    suffix = ".bundle" if kind == "legacy" else ".sigstore.json"
    status = _verify(artifact, bundle, root, owner="acme", repo="nexo-plugin-echo", suffix=suffix)
    assert status == "policy_invalid"
