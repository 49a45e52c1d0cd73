"""Hostile signature material: deep nesting and oversized files give one line with a kind,
never a traceback, and are not read whole."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from support.cli import nexo
from support.private_sigstore import PrivateSigstore
from support.tarballs import tree_snapshot, write_plugin

from nexo_pkg.trust.api import SignatureInvalidError, TrustPolicy, verify_asset_signature
from nexo_pkg.trust.material import MAX_BUNDLE_BYTES

from .helpers import ACME_IDENTITY, author

NESTED = "[" * 200_000 + "]" * 200_000


def _verify(artifact: Path, material: dict[str, Path | bytes]) -> object:
    return verify_asset_signature(
        artifact,
        asset_name=artifact.name,
        material=material,
        owner="acme",
        repo="nexo-plugin-echo",
        policy=TrustPolicy(default="require", authors=(author(),)),
        mode="require",
    )


@pytest.mark.parametrize("suffix", [".sigstore.json", ".bundle", ".intoto.jsonl"])
def test_deeply_nested_bundle_is_signature_invalid(tmp_path: Path, suffix: str) -> None:
    artifact = tmp_path / "echo-1.0.0-noarch.tar.gz"
    artifact.write_bytes(b"payload")
    bundle = tmp_path / (artifact.name + suffix)
    bundle.write_text(NESTED)
    with pytest.raises(SignatureInvalidError, match="nested too deeply"):
        _verify(artifact, {bundle.name: bundle})


def test_deeply_nested_attestations_from_the_api_are_signature_invalid(tmp_path: Path) -> None:
    from support.tarballs import sha256_hex

    from nexo_pkg.trust.material import attestations_name

    artifact = tmp_path / "echo-1.0.0-noarch.tar.gz"
    artifact.write_bytes(b"payload")
    name = attestations_name(sha256_hex(b"payload"))
    with pytest.raises(SignatureInvalidError, match="nested too deeply"):
        _verify(artifact, {name: NESTED.encode()})


def test_oversized_bundle_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    artifact = tmp_path / "echo-1.0.0-noarch.tar.gz"
    artifact.write_bytes(b"payload")
    bundle = tmp_path / (artifact.name + ".sigstore.json")
    with bundle.open("wb") as handle:
        handle.truncate(768 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(SignatureInvalidError, match=f"larger than {MAX_BUNDLE_BYTES} bytes"):
        _verify(artifact, {bundle.name: bundle})


def test_install_of_a_local_tarball_with_a_nested_bundle_prints_one_document(
    tmp_path: Path,
) -> None:
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    tarball.with_name(tarball.name + ".sigstore.json").write_text(NESTED)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = nexo("plugin", "install", str(tarball), "--yes", "--json", "--dest", str(plugins),
                  env={**os.environ, "NEXO_HOME": str(tmp_path / "home"),
                       "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")},
                  in_process=True)  # fmt: skip
    assert result.code == 1, result.stderr
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    assert document["kind"] == "signature_invalid"
    assert tree_snapshot(plugins) == before


@pytest.mark.parametrize("suffix", [".sigstore.json", ".intoto.jsonl"])
def test_a_bundle_holding_a_number_too_long_to_read_is_said_in_words_of_the_file(
    tmp_path: Path, suffix: str
) -> None:
    """A number of 100,000 digits is refused as Python refuses it, but the line names the
    number and the limit, never the Python call that would raise the limit."""
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    material = tarball.with_name(tarball.name + suffix)
    material.write_text('{"mediaType": ' + "9" * 100_000 + "}")
    plugins = tmp_path / "plugins"
    result = nexo("plugin", "install", str(tarball), "--yes", "--json", "--dest", str(plugins),
                  env={**os.environ, "NEXO_HOME": str(tmp_path / "home")})  # fmt: skip
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "signature_invalid"
    assert result.error_line == (
        f"error: {material.name} is not JSON: a number of 100000 digits"
        ", more than the 4300 a number may have [signature_invalid]"
    )
    assert "sys." not in result.stdout + result.stderr
    assert not plugins.exists()


@pytest.mark.parametrize("kind", ["directory", "fifo", "dangling-link"])
def test_signature_material_that_is_no_regular_file_is_signature_invalid(
    tmp_path: Path, kind: str
) -> None:
    """Under the default ``warn``, a bundle name holding a directory, a FIFO or a dangling
    link is not "no signature" (the tarball would go in unsigned): one line, nothing
    installed."""
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("FIFOs are POSIX")
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    bundle = tarball.with_name(tarball.name + ".sigstore.json")
    if kind == "directory":
        bundle.mkdir()
    elif kind == "fifo":
        os.mkfifo(bundle)
    else:
        bundle.symlink_to(tmp_path / "nowhere.json")
    code, document, stderr = _install_local(tmp_path, tarball)
    assert code == 1, stderr
    assert document["kind"] == "signature_invalid"
    assert f"{bundle} is not a regular file" in str(document["error"])


def _install_local(
    tmp_path: Path, tarball: Path, *flags: str
) -> tuple[int, dict[str, object], str]:
    plugins = tmp_path / "plugins"
    plugins.mkdir(exist_ok=True)
    before = tree_snapshot(plugins)
    result = nexo("plugin", "install", str(tarball), "--yes", "--json", "--dest", str(plugins),
                  *flags, env={**os.environ, "NEXO_HOME": str(tmp_path / "home"),
                               "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"), "NO_COLOR": "1"},
                  in_process=True)  # fmt: skip
    assert tree_snapshot(plugins) == before
    return result.code, json.loads(result.stdout), result.stderr


def test_a_bundle_sigstore_python_refuses_is_said_in_one_line(tmp_path: Path) -> None:
    """sigstore-python's models explain a malformed bundle over several lines with links;
    the refusal is one line naming the field and its problem."""
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    bundle = {"mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.3"}
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    code, document, stderr = _install_local(tmp_path, tarball)
    assert code == 1
    assert document["kind"] == "signature_invalid"
    assert document["error"] == (
        f"{tarball.name}.sigstore.json is not a valid Sigstore bundle: "
        "verificationMaterial: Field required"
    )
    assert stderr.splitlines() == [f"error: {document['error']} [{document['kind']}]"]


def test_a_trusted_root_sigstore_python_refuses_is_said_in_one_line(tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    tarball.with_name(tarball.name + ".sigstore.json").write_text(
        json.dumps({"mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.3"})
    )
    root = tmp_path / "root.json"
    media_type = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
    # Shaped like a trusted root (the policy reads it), with entries the models refuse.
    shaped = {"mediaType": media_type, "tlogs": [{}], "ctlogs": [], "certificateAuthorities": []}
    root.write_text(json.dumps(shaped))
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(f'default = "warn"\ntrusted_root = "{root}"\n')
    code, document, stderr = _install_local(tmp_path, tarball, "--trusted-keys", str(policy))
    assert code == 2
    assert document["kind"] == "policy_invalid"
    assert str(document["error"]).startswith(
        f"trusted_root {root} is not a usable Sigstore trusted root: tlogs.0."
    )
    assert stderr.splitlines() == [f"error: {document['error']} [{document['kind']}]"]


def test_a_trusted_root_of_the_wrong_shape_is_said_when_the_policy_is_read(
    tmp_path: Path,
) -> None:
    """A ``trusted_root`` that is no trusted root at all stops an unsigned install too,
    with every missing or malformed field named in one line."""
    tarball = write_plugin(tmp_path / "dist", "echo", "1.0.0")
    root = tmp_path / "root.json"
    media_type = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
    root.write_text(json.dumps({"mediaType": media_type, "tlogs": "x"}))
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(f'default = "warn"\ntrusted_root = "{root}"\n')
    code, document, stderr = _install_local(tmp_path, tarball, "--trusted-keys", str(policy))
    assert code == 2
    assert document["kind"] == "policy_invalid"
    assert document["error"] == (
        f"{policy}:2:1: invalid trust policy: trusted_root {str(root)!r} is not a usable "
        f"Sigstore trusted root ({root}): `tlogs` is not an array; `ctlogs` is missing; "
        "`certificateAuthorities` is missing"
    )
    assert stderr.splitlines() == [f"error: {document['error']} [{document['kind']}]"]


def _unreadable_issuer(pem_or_der: bytes) -> bytes:
    """The DER certificate with its issuer's common name retagged ([28], not UTF8String):
    the certificate still parses, its issuer name does not."""
    der = bytearray(pem_or_der)
    at = der.find(b"nexo-test-intermediate")
    assert der[at - 2] == 0x0C
    der[at - 2] = 0x9C
    return bytes(der)


@pytest.mark.parametrize("shape", ["bundle", "attestation", "legacy"])
def test_a_certificate_whose_issuer_cannot_be_read_is_signature_invalid(
    tmp_path: Path, private_sigstore: PrivateSigstore, shape: str
) -> None:
    """A signing certificate with an unreadable issuer name is a broken signature, said in one
    line of kind signature_invalid; not an internal error."""
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(
        'trusted_root = "private_trusted_root.json"\n\n[[authors]]\nowner = "acme"\n'
        f"identity = '{ACME_IDENTITY}'\n",
        encoding="utf-8",
    )
    tarball = write_plugin(tmp_path / "dist", "echo", "1.2.3")
    content = tarball.read_bytes()
    if shape == "legacy":
        document, _, pem = private_sigstore.sign_legacy(content, identity=ACME_IDENTITY)
        der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
        broken = x509.load_der_x509_certificate(_unreadable_issuer(der))
        document["cert"] = base64.b64encode(
            broken.public_bytes(serialization.Encoding.PEM)
        ).decode()
        suffix = ".bundle"
    else:
        if shape == "bundle":
            document = private_sigstore.sign(content, identity=ACME_IDENTITY)
        else:
            document = private_sigstore.attest(content, identity=ACME_IDENTITY)
        certificate = document["verificationMaterial"]["certificate"]
        der = base64.b64decode(certificate["rawBytes"])
        certificate["rawBytes"] = base64.b64encode(_unreadable_issuer(der)).decode()
        suffix = ".sigstore.json"
    tarball.with_name(tarball.name + suffix).write_text(json.dumps(document))
    plugins = tmp_path / "plugins"
    env = {**os.environ, "NEXO_HOME": str(tmp_path / "home"),
           "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")}  # fmt: skip
    for command in (
        ["install", str(tarball), "--yes", "--dest", str(plugins)],
        ["trust", "verify", str(tarball)],
    ):
        result = nexo("plugin", *command, "--trusted-keys", str(policy), "--json", env=env,
                      in_process=True)  # fmt: skip
        assert result.code == 1, result.stdout
        assert json.loads(result.stdout)["kind"] == "signature_invalid"
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr
    assert not plugins.exists() or not any(plugins.iterdir())
