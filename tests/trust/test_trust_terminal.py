"""What the trust commands and refusals put on a terminal: the entry to paste after a
refusal, every identity, issuer, pattern or name from a certificate or the policy file
escaped (a hostile one must not put escape sequences on the terminal), and the text and JSON
reports of ``trust verify`` for every signing scheme."""

from __future__ import annotations

import hashlib
import json
import shlex
import tomllib
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets

from .helpers import cli_env

__all__ = ["asset_host", "github_server"]

OWNER, REPO, PLUGIN = "acme", "nexo-plugin-echo", "echo"
# ESC clear-screen, an OSC title, BEL and a line feed (a certificate's SAN is ASCII), and a
# right-to-left override where text may be Unicode (issuer, policy file, command line).
HOSTILE_ASCII = "\x1b[2J\x1b]0;pwned\x07\n"
HOSTILE = HOSTILE_ASCII + "\u202e"
HOSTILE_IDENTITY = (
    f"https://github.com/acme/nexo-plugin-echo/.github/workflows/pub{HOSTILE_ASCII}lish.yml"
    "@refs/tags/v1.0.0"
)
HOSTILE_ISSUER = f"https://token.actions.githubusercontent.com/{HOSTILE}"
POLICY = """\
# kept
schema_version = "1.0"
default = "require"
trusted_root = "private_trusted_root.json"
"""


def assert_clean(text: str) -> None:
    """No raw control character (but line feeds between lines) nor bidi override."""
    for char in text:
        assert char == "\n" or (char.isprintable() and char not in "\u202e\u2066"), repr(char)


def _policy(tmp_path: Path, instance: PrivateSigstore, extra: str = "") -> Path:
    instance.write_trusted_root(tmp_path / "private_trusted_root.json")
    path = tmp_path / "trusted_keys.toml"
    path.write_text(POLICY + extra, encoding="utf-8")
    return path


def _signed_release(
    server: GitHubServer, instance: PrivateSigstore, identity: str, issuer: str
) -> None:
    assets = release_assets(PLUGIN, "1.0.0")
    name = asset_name(PLUGIN, "1.0.0")
    assets[name + ".sigstore.json"] = json.dumps(
        instance.sign(assets[name], identity=identity, issuer=issuer)
    ).encode()
    server.publish(OWNER, REPO, "v1.0.0", assets)


def _install(tmp_path: Path, server: GitHubServer, policy: Path, *flags: str) -> CliResult:
    return nexo("plugin", "install", f"{OWNER}/{REPO}@v1.0.0", "--yes", "--dest",
                str(tmp_path / "plugins"), "--trusted-keys", str(policy), *flags,
                env=cli_env(tmp_path, api=server.url), in_process=True)  # fmt: skip


def _pasted_entry(stderr: str) -> str:
    """The entry lines a text refusal printed after ``To trust this signer, add …:``."""
    lines = stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("To trust this signer"))
    entry = [line.removeprefix("  ") for line in lines[start + 1 :] if line.startswith("  ")]
    return "\n".join(entry) + "\n"


@pytest.mark.parametrize(
    ("identity", "issuer"),
    [
        (
            "https://github.com/acme/nexo-plugin-echo/.github/workflows/publish.yml"
            "@refs/tags/v1.0.0",
            "https://token.actions.githubusercontent.com",
        ),
        (HOSTILE_IDENTITY, HOSTILE_ISSUER),
    ],
    ids=["plain", "hostile"],
)
def test_a_text_refusal_prints_the_exact_entry_to_paste(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    identity: str,
    issuer: str,
) -> None:
    """The entry printed is what --json carries, escaped for the terminal, and pasting it
    into the policy makes the same install succeed."""
    _signed_release(github_server, private_sigstore, identity, issuer)
    policy = _policy(tmp_path, private_sigstore)
    refused = _install(tmp_path, github_server, policy)
    assert refused.code == 1
    assert refused.stderr.startswith("error: ")
    assert f"To trust this signer, add to {policy}:" in refused.stderr
    assert_clean(refused.stderr)
    as_json = _install(tmp_path, github_server, policy, "--json")
    document = json.loads(as_json.stdout)
    assert document["kind"] == "signer_untrusted"
    pasted = _pasted_entry(refused.stderr)
    assert pasted == document["entry"]
    assert tomllib.loads(pasted)["authors"][0]["oidc_issuer"]
    with policy.open("a", encoding="utf-8") as handle:
        handle.write("\n" + pasted)
    installed = _install(tmp_path, github_server, policy, "--json")
    assert installed.code == 0, installed.stderr
    assert json.loads(installed.stdout)["signature"]["identity"] == identity
    assert policy.read_text(encoding="utf-8").startswith("# kept\n")


def test_trust_verify_escapes_what_the_certificate_says(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    artifact = tmp_path / "artifact.bin"
    artifact.write_bytes(b"payload")
    bundle = tmp_path / "artifact.bin.sigstore.json"
    bundle.write_text(
        json.dumps(
            private_sigstore.sign(b"payload", identity=HOSTILE_IDENTITY, issuer=HOSTILE_ISSUER)
        )
    )
    trusting = _policy(
        tmp_path,
        private_sigstore,
        '[[authors]]\nowner = "acme"\nidentity_regexp = "^https://github\\\\.com/acme/[\\\\s\\\\S]+$"\n'
        f"oidc_issuer = {json.dumps(HOSTILE_ISSUER)}\n",
    )
    verified = nexo("plugin", "trust", "verify", str(artifact), "--trusted-keys", str(trusting),
                    env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert verified.code == 0, verified.stderr
    assert "\\u001b[2J" in verified.stdout
    assert_clean(verified.stdout)
    assert_clean(verified.stderr)
    # Refused (a pattern for another workflow): the error and the entry it prints are
    # escaped too.
    other = tmp_path / "other.toml"
    other.write_text(
        trusting.read_text(encoding="utf-8").replace("acme/[", "acme/x/["), encoding="utf-8"
    )
    refused = nexo("plugin", "trust", "verify", str(artifact), "--trusted-keys", str(other),
                   env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert refused.code == 1
    assert "To trust this signer, add" in refused.stderr
    assert "\\u001b" in refused.stderr
    assert_clean(refused.stderr)
    assert_clean(refused.stdout)


def test_trust_list_escapes_a_hostile_policy(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    policy = _policy(
        tmp_path,
        private_sigstore,
        "[[authors]]\n"
        'owner = "acme"\n'
        'identity_regexp = "^https://github\\\\.com/acme/\\u001b\\\\[2J.*$"\n'
        'signer_workflow = "acme/x/.github/workflows/\\u001b]0;pwned\\u0007.yml"\n'
        'source_ref = "^refs/tags/\\u202e.*$"\n',
    )
    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert listed.code == 0, listed.stderr
    assert "\\u001b\\[2J" in listed.stdout
    assert "\\u001b]0;pwned\\u0007" in listed.stdout
    assert_clean(listed.stdout)
    assert_clean(listed.stderr)


def test_trust_add_and_remove_escape_what_they_echo(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text("# kept\n")
    added = nexo("plugin", "trust", "add", "acme/echo", "--identity", f"x{HOSTILE}@example.com",
                 "--signer-workflow", f"acme/echo/.github/workflows/{HOSTILE}.yml",
                 "--trusted-keys", str(policy), "--yes", env=cli_env(tmp_path),
                 in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    assert "\\u001b[2J" in added.stderr
    assert_clean(added.stderr)
    assert_clean(added.stdout)
    written = tomllib.loads(policy.read_text(encoding="utf-8"))["authors"][0]
    assert written["identity"] == f"x{HOSTILE}@example.com"
    listed = nexo("plugin", "trust", "list", "--trusted-keys", str(policy), env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert_clean(listed.stdout + listed.stderr)
    removed = nexo("plugin", "trust", "remove", f"acme/{HOSTILE}", "--trusted-keys", str(policy),
                   "--yes", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert removed.code == 2
    assert_clean(removed.stderr)
    gone = nexo("plugin", "trust", "remove", "acme", "--trusted-keys", str(policy), "--yes",
                env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert gone.code == 0, gone.stderr
    assert "owner" not in policy.read_text(encoding="utf-8")


def test_an_unknown_signer_under_warn_is_told_the_command_that_trusts_it(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """No entry for the owner under warn: installed as unsigned, and the warning gives the
    `trust add` command; running it makes the next install verified."""
    identity = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.0.0"
    )
    _signed_release(
        github_server, private_sigstore, identity, "https://token.actions.githubusercontent.com"
    )
    policy = _policy(tmp_path, private_sigstore)
    policy.write_text(policy.read_text().replace('"require"', '"warn"'))
    first = _install(tmp_path, github_server, policy, "--json", "--dry-run")
    assert first.code == 0, first.stderr
    document = json.loads(first.stdout)
    assert document["signature"]["status"] == "unsigned"
    (warning,) = [w for w in document["warnings"] if "UNVERIFIED" in w]
    assert str(policy) in warning
    command = shlex.split(warning.partition("run: ")[2])
    assert command[:4] == ["nexo", "plugin", "trust", "add"]
    added = nexo("plugin", *command[2:], "--yes", env=cli_env(tmp_path, api=github_server.url),
                 in_process=True)  # fmt: skip
    assert added.code == 0, added.stderr
    second = _install(tmp_path, github_server, policy, "--json")
    assert second.code == 0, second.stderr
    assert json.loads(second.stdout)["signature"]["status"] == "verified"


# --- trust verify: every scheme install reads, beside the file --------------------------------

RELEASE_IDENTITY = (
    "https://github.com/acme/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.0.0"
)
ACME_ENTRY = (
    '[[authors]]\nowner = "acme"\n'
    "identity_regexp = '^https://github\\.com/acme/nexo-plugin-echo/\\.github/workflows/"
    "release\\.yml@refs/tags/.+$'\n"
)


@pytest.mark.parametrize("scheme", ["sigstore-bundle", "github-attestation", "checksums-file",
                                    "cosign-legacy"])  # fmt: skip
def test_trust_verify_reads_every_scheme_beside_the_file(
    tmp_path: Path, private_sigstore: PrivateSigstore, scheme: str
) -> None:
    """The tool to run when install refuses a release: same schemes, same verdicts; and a
    flipped byte of the file is refused whatever the scheme."""
    dist = tmp_path / "dist"
    dist.mkdir()
    artifact = dist / "echo-1.0.0-noarch.tar.gz"
    data = b"plugin bytes " * 100
    artifact.write_bytes(data)
    if scheme == "sigstore-bundle":
        signed = private_sigstore.sign(data, identity=RELEASE_IDENTITY)
        (dist / f"{artifact.name}.sigstore.json").write_text(json.dumps(signed))
    elif scheme == "github-attestation":
        attested = private_sigstore.attest(data, identity=RELEASE_IDENTITY)
        (dist / f"{artifact.name}.intoto.jsonl").write_text(json.dumps(attested) + "\n")
    elif scheme == "checksums-file":
        listing = f"{hashlib.sha256(data).hexdigest()}  {artifact.name}\n".encode()
        (dist / "checksums.txt").write_bytes(listing)
        signed = private_sigstore.sign(listing, identity=RELEASE_IDENTITY)
        (dist / "checksums.txt.sigstore.json").write_text(json.dumps(signed))
    else:
        legacy, _, _ = private_sigstore.sign_legacy(data, identity=RELEASE_IDENTITY)
        (dist / f"{artifact.name}.bundle").write_text(json.dumps(legacy))
    policy = _policy(tmp_path, private_sigstore, ACME_ENTRY)
    verified = nexo("plugin", "trust", "verify", str(artifact), "--trusted-keys", str(policy),
                    "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert verified.code == 0, verified.stderr
    document = json.loads(verified.stdout)
    assert (document["scheme"], document["identity"]) == (scheme, RELEASE_IDENTITY)
    text = nexo("plugin", "trust", "verify", str(artifact), "--trusted-keys", str(policy),
                env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert text.code == 0, text.stderr
    assert f"verified ({scheme}" in text.stdout
    artifact.write_bytes(data[:-1] + b"X")
    flipped = nexo("plugin", "trust", "verify", str(artifact), "--trusted-keys", str(policy),
                   "--json", env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert flipped.code == 1
    assert json.loads(flipped.stdout)["kind"] == "signature_invalid"


def test_trust_verify_takes_a_checksums_files_bundle(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """``--bundle checksums.txt.sigstore.json`` (the file beside it) checks FILE as install
    would: the checksums file's signature, then FILE's line."""
    downloads, release = tmp_path / "downloads", tmp_path / "release"
    downloads.mkdir()
    release.mkdir()
    artifact = downloads / "echo-1.0.0-noarch.tar.gz"
    artifact.write_bytes(b"plugin")
    listing = f"{hashlib.sha256(b'plugin').hexdigest()}  {artifact.name}\n".encode()
    (release / "checksums.txt").write_bytes(listing)
    bundle = release / "checksums.txt.sigstore.json"
    bundle.write_text(json.dumps(private_sigstore.sign(listing, identity=RELEASE_IDENTITY)))
    policy = _policy(tmp_path, private_sigstore, ACME_ENTRY)
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(bundle),
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["scheme"] == "checksums-file"
    (release / "checksums.txt").write_bytes(listing.replace(b"echo-1.0.0", b"other-1.0.0"))
    changed = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(bundle),
                   "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                   in_process=True)  # fmt: skip
    assert changed.code == 1
    assert json.loads(changed.stdout)["kind"] == "signature_invalid"


def test_trust_verify_of_a_checksums_files_bundle_without_the_file_says_so(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """Without ``checksums.txt`` beside its bundle, FILE cannot be judged: a usage error that
    names the missing file (not a digest mismatch of the bundle over FILE). The checksums
    file itself, given as FILE with its bundle, is checked as any signed file."""
    release = tmp_path / "release"
    release.mkdir()
    artifact = tmp_path / "echo-1.0.0-noarch.tar.gz"
    artifact.write_bytes(b"plugin")
    listing = f"{hashlib.sha256(b'plugin').hexdigest()}  {artifact.name}\n".encode()
    bundle = release / "checksums.txt.sigstore.json"
    bundle.write_text(json.dumps(private_sigstore.sign(listing, identity=RELEASE_IDENTITY)))
    policy = _policy(tmp_path, private_sigstore, ACME_ENTRY)
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(bundle),
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 2, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "usage"
    assert document["error"] == (
        f"--bundle {bundle} signs checksums.txt, which is not beside it: put checksums.txt "
        "next to its bundle"
    )
    elsewhere = tmp_path / "checksums.txt"
    elsewhere.write_bytes(listing)
    itself = nexo("plugin", "trust", "verify", str(elsewhere), "--bundle", str(bundle),
                  "--trusted-keys", str(policy), "--json", env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert itself.code == 0, itself.stdout
    assert json.loads(itself.stdout)["scheme"] == "sigstore-bundle"


def test_trust_verify_reads_a_detached_sig_given_as_bundle_as_install_would(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """``--bundle A.sig`` is a detached cosign signature, not a JSON bundle: the verdict is
    install's on ``A.sig`` + ``A.cert`` (no Rekor bundle: cannot be verified offline)."""
    artifact = tmp_path / "echo-1.0.0-noarch.tar.gz"
    artifact.write_bytes(b"plugin")
    _legacy, signature, certificate = private_sigstore.sign_legacy(
        b"plugin", identity=RELEASE_IDENTITY
    )
    material = tmp_path / "material"
    material.mkdir()
    (material / "echo.sig").write_bytes(signature)
    (material / "echo.cert").write_bytes(certificate)
    policy = _policy(tmp_path, private_sigstore, ACME_ENTRY)
    result = nexo("plugin", "trust", "verify", str(artifact), "--bundle",
                  str(material / "echo.sig"), "--trusted-keys", str(policy), "--json",
                  env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert result.code == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "signature_invalid"
    assert document["error"].startswith(
        f"{material / 'echo.sig'}: a detached signature without a Rekor bundle"
    )


def test_a_local_tarball_signed_by_a_stranger_under_warn_names_no_owner(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    """A local tarball has no owner: the warning says the policy has no entry for its signer,
    not an entry for ``None``."""
    policy = _policy(tmp_path, private_sigstore)
    policy.write_text(policy.read_text().replace('"require"', '"warn"'))
    dist = tmp_path / "dist"
    dist.mkdir()
    name = asset_name(PLUGIN, "1.0.0")
    for file_name, content in release_assets(PLUGIN, "1.0.0").items():
        (dist / file_name).write_bytes(content)
    bundle = private_sigstore.sign((dist / name).read_bytes(), identity=RELEASE_IDENTITY)
    (dist / (name + ".sigstore.json")).write_text(json.dumps(bundle), encoding="utf-8")
    result = nexo("plugin", "install", str(dist / name), "--yes", "--json", "--dry-run",
                  "--trusted-keys", str(policy), env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["signature"]["status"] == "unsigned"
    (warning,) = [w for w in document["warnings"] if "UNVERIFIED" in w]
    assert "None" not in warning
    assert f"{policy} has no [[authors]] entry; installing it as UNVERIFIED" in warning
