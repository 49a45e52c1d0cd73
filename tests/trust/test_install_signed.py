"""``nexo plugin install`` end to end with signatures, against the loopback GitHub server."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.tarballs import asset_name, release_assets, tree_snapshot

from .helpers import ACME_IDENTITY, ACME_REGEXP, cli_env

__all__ = ["asset_host", "github_server"]

OWNER, REPO, TAG, PLUGIN, VERSION = "acme", "nexo-plugin-echo", "v1.2.3", "echo", "1.2.3"
ASSET = asset_name(PLUGIN, VERSION)

POLICY = f"""\
schema_version = "1.0"
default = "warn"
trusted_root = "private_trusted_root.json"

[[authors]]
owner = "acme"
identity_regexp = '{ACME_REGEXP}'
"""


def _publish(
    server: GitHubServer,
    instance: PrivateSigstore,
    *,
    identity: str | None = ACME_IDENTITY,
    tamper: bool = False,
    sign_other: bool = False,
    legacy: bool = False,
    integrated_late: bool = False,
) -> None:
    assets = release_assets(PLUGIN, VERSION)
    # The log integrates the entry after the ten-minute certificate has expired.
    late = instance.created + timedelta(minutes=30) if integrated_late else None
    if identity is not None and legacy:
        document, signature, pem = instance.sign_legacy(
            assets[ASSET], identity=identity, integrated_time=late
        )
        assets[ASSET + ".bundle"] = json.dumps(document).encode()
        assets[ASSET + ".sig"] = signature
        assets[ASSET + ".pem"] = pem
    elif identity is not None:
        signed = b"another asset" if sign_other else assets[ASSET]
        bundle = instance.sign(signed, identity=identity, integrated_time=late)
        assets[ASSET + ".sigstore.json"] = json.dumps(bundle).encode()
    if tamper:
        # Same checksum sidecar as the tampered bytes, so only the signature can notice.
        from support.tarballs import plugin_tarball, sidecar_line

        tampered = plugin_tarball(PLUGIN, VERSION, payload=b"tampered")
        assets[ASSET] = tampered
        assets[ASSET + ".sha256"] = sidecar_line(tampered, ASSET).encode()
    server.publish(OWNER, REPO, TAG, assets)


def _install(tmp_path: Path, server: GitHubServer, *flags: str) -> CliResult:
    env = cli_env(tmp_path, api=server.url)
    return nexo("plugin", "install", f"{OWNER}/{REPO}@{TAG}", "--yes", "--json", *flags, env=env,
                in_process=True)  # fmt: skip


@pytest.fixture
def policy_file(tmp_path: Path, private_sigstore: PrivateSigstore) -> Path:
    private_sigstore.write_trusted_root(tmp_path / "private_trusted_root.json")
    path = tmp_path / "trusted_keys.toml"
    path.write_text(POLICY, encoding="utf-8")
    return path


def _plugins(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state" / "plugins"


def test_trusted_signer_installs_verified(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
) -> None:
    _publish(github_server, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file),
                      "--require-signature")  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is True
    assert document["signature"]["status"] == "verified"
    assert document["signature"]["identity"] == ACME_IDENTITY
    receipt = json.loads(
        (_plugins(tmp_path) / f"{PLUGIN}-{VERSION}" / ".nexo-install.json").read_text()
    )
    assert receipt["signature"]["status"] == "verified"
    assert receipt["signature"]["identity"] == ACME_IDENTITY
    assert receipt["signature"]["issuer"] == "https://token.actions.githubusercontent.com"
    assert len(receipt["signature"]["bundle_sha256"]) == 64


def test_the_confirmation_screen_shows_the_verified_signer(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
) -> None:
    _publish(github_server, private_sigstore)
    env = cli_env(tmp_path, api=github_server.url)
    result = nexo("plugin", "install", f"{OWNER}/{REPO}@{TAG}", "--yes", "--trusted-keys",
                  str(policy_file), env=env, in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()  # the screen is a note, on stderr
    assert (
        f"Signer:       {ACME_IDENTITY} (issuer https://token.actions.githubusercontent.com)"
    ) in lines
    assert f"Built in:     {OWNER}/{REPO}" in lines


def test_legacy_cosign_bundle_installs_verified(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
) -> None:
    _publish(github_server, private_sigstore, legacy=True)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file),
                      "--require-signature")  # fmt: skip
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["identity"] == ACME_IDENTITY


def test_unsigned_under_warn_installs_as_unsigned(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
) -> None:
    _publish(github_server, private_sigstore, identity=None)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file))
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["status"] == "unsigned"
    assert "NOT SIGNED" in result.stderr


@pytest.mark.parametrize(
    ("case", "flags", "kind"),
    [
        ("unsigned", ("--require-signature",), "signature_missing"),
        ("untrusted", (), "signer_untrusted"),
        ("tampered", (), "signature_invalid"),
        ("other_asset", (), "signature_invalid"),
        ("untrusted_owner", ("--require-signature",), "signer_untrusted"),
        ("expired_at_integration", (), "signature_invalid"),
        ("legacy_tampered", (), "signature_invalid"),
        ("legacy_untrusted_owner", ("--require-signature",), "signer_untrusted"),
        ("legacy_expired_at_integration", (), "signature_invalid"),
    ],
)
def test_refusals_leave_the_plugin_root_unchanged(  # noqa: PLR0917 - pytest fixtures
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
    case: str,
    flags: tuple[str, ...],
    kind: str,
) -> None:
    identity: str | None = ACME_IDENTITY
    if case == "unsigned":
        identity = None
    elif case == "untrusted":
        identity = "https://github.com/acme/nexo-plugin-echo/.github/workflows/ci.yml@refs/heads/x"
    elif case.endswith("untrusted_owner"):
        # Built and signed in another owner's repository: no entry of the policy vouches for it.
        identity = "https://github.com/evil/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
    _publish(
        github_server, private_sigstore, identity=identity,
        tamper=case.endswith("tampered"), sign_other=case == "other_asset",
        legacy=case.startswith("legacy"), integrated_late=case.endswith("expired_at_integration"),
    )  # fmt: skip
    plugins = _plugins(tmp_path)
    plugins.mkdir(parents=True)
    (plugins / "keep.txt").write_text("untouched")
    before = tree_snapshot(plugins)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file), *flags)
    assert result.code == 1, result.stderr
    document = json.loads(result.stdout)
    assert document["ok"] is False
    assert document["kind"] == kind
    # The verifier's reason in words: no Python form of a certificate.
    assert "<Certificate" not in document["error"], document["error"]
    if case.endswith("expired_at_integration"):
        assert "not valid at validation time" in document["error"], document["error"]
    assert tree_snapshot(plugins) == before


def test_a_mode_for_another_repository_of_the_owner_does_not_apply(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
) -> None:
    # The operator relaxed one experimental repository; acme's release repository still
    # gets the policy's default, here `require`.
    policy_file.write_text(
        POLICY.replace('default = "warn"', 'default = "require"')
        + 'repos = ["nexo-plugin-echo"]\n\n[[authors]]\nowner = "acme"\n'
        'identity = "https://github.com/acme/sandbox/.github/workflows/r.yml@refs/heads/main"\n'
        'repos = ["sandbox"]\nmode = "ignore"\n',
        encoding="utf-8",
    )
    _publish(github_server, private_sigstore, identity=None)
    plugins = _plugins(tmp_path)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file))
    assert result.code == 1, result.stdout
    assert json.loads(result.stdout)["kind"] == "signature_missing"
    assert not plugins.exists() or tree_snapshot(plugins) == {}


def test_invalid_policy_is_exit_2_with_its_line(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    _publish(github_server, private_sigstore)
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "warn"\n[[authors]]\nowner = "acme"\n')
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy))
    assert result.code == 2
    document = json.loads(result.stdout)
    assert document["kind"] == "policy_invalid"
    assert f"{policy}:2:" in document["error"]
    assert not _plugins(tmp_path).exists() or not any(_plugins(tmp_path).iterdir())


# The reference installer (Rust `regex`) and cosign (Go, RE2) read these classes; Python's `re`
# made `\p{L}` an invalid policy and `[[:alnum:]]` a class that never matches.
RE2_CLASSES = {
    "posix": r"https://github\.com/acme/[[:alnum:]_.-]+/\.github/workflows/release\.yml@refs/tags/v.*",
    "unicode": r"https://github\.com/\p{L}+/nexo-plugin-\p{L}+/\.github/workflows/release\.yml@.*",
}


@pytest.mark.parametrize("dialect", sorted(RE2_CLASSES))
def test_a_policy_in_the_re2_dialect_verifies_and_a_look_ahead_is_policy_invalid(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
    dialect: str,
) -> None:
    _publish(github_server, private_sigstore)
    policy_file.write_text(POLICY.replace(ACME_REGEXP, RE2_CLASSES[dialect]), encoding="utf-8")
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file),
                      "--require-signature")  # fmt: skip
    assert result.code == 0, result.stdout
    assert result.document["signature"]["status"] == "verified"
    assert result.document["signature"]["identity"] == ACME_IDENTITY

    # A look-ahead, which the reference's `regex` rejects, makes the policy invalid: exit 2,
    # nothing installed (nor replaced).
    plugins = _plugins(tmp_path)
    before = tree_snapshot(plugins)
    look_ahead = RE2_CLASSES[dialect].replace("https", "(?=https)https", 1)
    policy_file.write_text(POLICY.replace(ACME_REGEXP, look_ahead), encoding="utf-8")
    refused = _install(tmp_path, github_server, "--trusted-keys", str(policy_file), "--force")
    assert (refused.code, refused.document["kind"]) == (2, "policy_invalid"), refused.stdout
    assert f"{policy_file}:" in refused.document["error"]
    assert tree_snapshot(plugins) == before


def test_local_tarball_with_a_sigstore_sibling_installs_verified(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
) -> None:
    from support.tarballs import write_plugin

    tarball = write_plugin(tmp_path / "dist", PLUGIN, VERSION)
    bundle = private_sigstore.sign(tarball.read_bytes(), identity=ACME_IDENTITY)
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    env_source = str(tarball)
    result = nexo("plugin", "install", env_source, "--yes", "--json", "--trusted-keys",
                  str(policy_file), "--require-signature",
                  env={**os.environ, "NEXO_HOME": str(tmp_path / "home"),
                       "XDG_CACHE_HOME": str(tmp_path / "xdg-cache")},
                  in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["signature"]["status"] == "verified"
    assert document["signature"]["identity"] == ACME_IDENTITY


@pytest.mark.parametrize(
    ("default", "entry_mode", "release", "flags", "expected"),
    [
        # The owner's entry overrides the policy's default, both ways.
        ("warn", "require", "unsigned", (), "signature_missing"),
        ("require", "warn", "unsigned", (), "unsigned"),
        ("require", "ignore", "tampered", (), "skipped"),
        # The flags override the entry.
        ("warn", "require", "unsigned", ("--skip-signature-verify",), "skipped"),
        ("warn", "ignore", "unsigned", ("--require-signature",), "signature_missing"),
        ("warn", "ignore", "tampered", ("--require-signature",), "signature_invalid"),
    ],
)
def test_mode_precedence_flags_then_the_owners_entry_then_the_default(  # noqa: PLR0917
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
    default: str,
    entry_mode: str,
    release: str,
    flags: tuple[str, ...],
    expected: str,
) -> None:
    """SPEC §6: `--skip-signature-verify` → ignore; else `--require-signature` → require; else
    the matching author's `mode`; else `default` — through a real install of a GitHub release.
    A refusal installs nothing; a signature present but broken is refused in every mode but
    ignore."""
    policy_file.write_text(
        POLICY.replace('default = "warn"', f'default = "{default}"') + f'mode = "{entry_mode}"\n',
        encoding="utf-8",
    )
    _publish(
        github_server, private_sigstore,
        identity=None if release == "unsigned" else ACME_IDENTITY, tamper=release == "tampered",
    )  # fmt: skip
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy_file), *flags)
    document = json.loads(result.stdout)
    plugins = _plugins(tmp_path)
    if expected in {"unsigned", "skipped"}:
        assert result.code == 0, result.stderr
        assert document["signature"]["status"] == expected
        receipt = json.loads((plugins / f"{PLUGIN}-{VERSION}" / ".nexo-install.json").read_text())
        assert receipt["signature"]["status"] == expected
    else:
        assert result.code == 1, result.stderr
        assert document["kind"] == expected
        assert not plugins.exists() or tree_snapshot(plugins) == {}


@pytest.mark.parametrize(
    ("default", "flags", "code", "outcome"),
    [
        ("require", (), 1, "signer_untrusted"),
        ("warn", ("--require-signature",), 1, "signer_untrusted"),
        ("warn", (), 0, "unsigned"),
    ],
)
def test_a_release_of_an_owner_without_an_entry(  # noqa: PLR0917 - pytest fixtures
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    policy_file: Path,
    default: str,
    flags: tuple[str, ...],
    code: int,
    outcome: str,
) -> None:
    """SPEC §6: a valid signature of an owner the policy has no entry for is `signer_untrusted`
    under require; under warn it installs as `unsigned`, with a warning naming the signer."""
    policy_file.write_text(POLICY.replace('"warn"', f'"{default}"'), encoding="utf-8")
    identity = (
        "https://github.com/other/nexo-plugin-echo/.github/workflows/release.yml@refs/tags/v1.2.3"
    )
    assets = release_assets(PLUGIN, VERSION)
    bundle = private_sigstore.sign(assets[ASSET], identity=identity)
    assets[ASSET + ".sigstore.json"] = json.dumps(bundle).encode()
    github_server.publish("other", REPO, TAG, assets)
    plugins = _plugins(tmp_path)
    result = nexo("plugin", "install", f"other/{REPO}@{TAG}", "--yes", "--json", "--trusted-keys",
                  str(policy_file), *flags, env=cli_env(tmp_path, api=github_server.url),
                  in_process=True)  # fmt: skip
    assert result.code == code, result.stdout
    document = json.loads(result.stdout)
    if code:
        assert document["kind"] == outcome
        assert "no [[authors]] entry for owner 'other'" in document["error"]
        assert not plugins.exists() or tree_snapshot(plugins) == {}
        return
    assert document["signature"]["status"] == outcome
    (warning,) = [w for w in document["warnings"] if "UNVERIFIED" in w]
    assert identity in warning
    receipt = json.loads((plugins / f"{PLUGIN}-{VERSION}" / ".nexo-install.json").read_text())
    assert receipt["signature"]["status"] == "unsigned"
