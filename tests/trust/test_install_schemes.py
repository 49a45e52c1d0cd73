"""``nexo plugin install`` with every signing scheme and the bindings of a signature to the
release installed, against the loopback GitHub server and the private Sigstore instance."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from support.cli import CliResult, nexo
from support.github_server import GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import skip_unless_present
from support.tarballs import asset_name, plugin_tarball, release_assets, tree_snapshot

from .helpers import SHARED_FIXTURES, cli_env

__all__ = ["asset_host", "github_server"]

OWNER, PLUGIN = "acme", "echo"
WORKFLOW = "https://github.com/acme/{repo}/.github/workflows/release.yml@refs/tags/{tag}"
# The reusable workflow of another repository the attested releases are signed by.
REUSABLE_SIGNER = 'signer_workflow = "actions/reusable/.github/workflows/attest.yml"\n'

POLICY = """\
schema_version = "1.0"
default = "require"
trusted_root = "private_trusted_root.json"

[[authors]]
owner = "acme"
identity_regexp = '^https://github\\.com/acme/[^/]+/\\.github/workflows/release\\.yml@refs/tags/.+$'
{extra}"""


def scheme_policy(tmp_path: Path, instance: PrivateSigstore, extra: str = "") -> Path:
    instance.write_trusted_root(tmp_path / "private_trusted_root.json")
    path = tmp_path / "trusted_keys.toml"
    path.write_text(POLICY.format(extra=extra), encoding="utf-8")
    return path


def run_install(tmp_path: Path, server: GitHubServer, source: str, *flags: str) -> CliResult:
    env = cli_env(tmp_path, api=server.url)
    return nexo("plugin", "install", source, "--yes", "--json", "--dest", str(tmp_path / "plugins"),
                *flags, env=env, in_process=True)  # fmt: skip


def refused(result: CliResult, kind: str, plugins: Path) -> dict[str, Any]:
    assert result.code == 1, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["ok"] is False
    assert document["kind"] == kind, document
    assert not plugins.exists() or not any(p.name.startswith(PLUGIN) for p in plugins.iterdir())
    return document


def _publish_signed(
    server: GitHubServer,
    instance: PrivateSigstore,
    repo: str,
    tag: str,
    *,
    version: str,
    identity: str,
) -> None:
    """Publish ``PLUGIN`` ``version`` as ``OWNER/repo@tag``, its tarball signed by ``identity``
    (a bundle beside it)."""
    assets = release_assets(PLUGIN, version)
    name = asset_name(PLUGIN, version)
    signed = instance.sign(assets[name], identity=identity)
    assets[name + ".sigstore.json"] = json.dumps(signed).encode()
    server.publish(OWNER, repo, tag, assets)


# --- a signature names the tag it was made for ----------------------------------------------


def test_a_genuine_old_signature_cannot_vouch_for_a_newer_tag(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """A mirror answers v2.0.0 with the genuinely signed 0.1.0 release: refused."""
    repo = "nexo-plugin-echo"
    _publish_signed(github_server, private_sigstore, repo, "v2.0.0", version="0.1.0",
                    identity=WORKFLOW.format(repo=repo, tag="v0.1.0"))  # fmt: skip
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v2.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    document = refused(result, "signer_untrusted", tmp_path / "plugins")
    assert "signed for tag v0.1.0, not for v2.0.0" in document["error"]


def test_upgrade_refuses_a_release_relabelled_as_a_newer_tag(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """Under ``require``, a mirror serves the genuine v2.0.0 release (tarball, manifest and
    signature all agreeing on 2.0.0) as the newest tag v3.0.0: newer than the installed
    1.0.0, so no downgrade check stops it; the signature names v2.0.0, so upgrade refuses it
    and the installed plugin stays as it was."""
    repo = "nexo-plugin-echo"
    _publish_signed(github_server, private_sigstore, repo, "v1.0.0", version="1.0.0",
                    identity=WORKFLOW.format(repo=repo, tag="v1.0.0"))  # fmt: skip
    policy = scheme_policy(tmp_path, private_sigstore)
    installed = run_install(tmp_path, github_server, f"{OWNER}/{repo}",
                            "--trusted-keys", str(policy))  # fmt: skip
    assert installed.code == 0, installed.stderr
    _publish_signed(github_server, private_sigstore, repo, "v3.0.0", version="2.0.0",
                    identity=WORKFLOW.format(repo=repo, tag="v2.0.0"))  # fmt: skip
    plugins = tmp_path / "plugins"
    before = tree_snapshot(plugins)
    result = nexo("plugin", "upgrade", PLUGIN, "--yes", "--json", "--dest", str(plugins),
                  "--trusted-keys", str(policy), env=cli_env(tmp_path, api=github_server.url),
                  in_process=True)  # fmt: skip
    assert result.code == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["kind"] == "signer_untrusted", document
    assert "signed for tag v2.0.0, not for v3.0.0" in document["error"]
    assert tree_snapshot(plugins) == before


def test_the_signature_of_the_tag_installed_verifies(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = "nexo-plugin-echo"
    _publish_signed(github_server, private_sigstore, repo, "v2.0.0", version="2.0.0",
                    identity=WORKFLOW.format(repo=repo, tag="v2.0.0"))  # fmt: skip
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v2.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    signature = json.loads(result.stdout)["signature"]
    assert signature["status"] == "verified"
    assert signature["scheme"] == "sigstore-bundle"
    assert signature["claims"]["source_ref"] == "refs/tags/v2.0.0"


# --- a signature names the repository it was made in ----------------------------------------


def _republished(server: GitHubServer, instance: PrivateSigstore) -> None:
    """``acme/other`` republishes hello's genuinely signed tarball."""
    _publish_signed(server, instance, "other", "v1.0.0", version="1.0.0",
                    identity=WORKFLOW.format(repo="hello", tag="v1.0.0"))  # fmt: skip


def test_a_republished_signed_tarball_is_refused(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    _republished(github_server, private_sigstore)
    policy = scheme_policy(tmp_path, private_sigstore, 'repos = ["hello"]\n')
    result = run_install(tmp_path, github_server, f"{OWNER}/other@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    document = refused(result, "signer_untrusted", tmp_path / "plugins")
    assert "built in acme/hello, not in acme/other" in document["error"]


def test_allow_republish_trusts_the_copy_explicitly(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    _republished(github_server, private_sigstore)
    policy = scheme_policy(
        tmp_path, private_sigstore, 'repos = ["hello"]\nallow_republish = true\n'
    )
    result = run_install(tmp_path, github_server, f"{OWNER}/other@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["claims"]["source_repository"] == "acme/hello"


def test_refusal_names_the_policy_and_the_command_that_trusts_the_signer(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = "nexo-plugin-echo"
    identity = (
        "https://github.com/acme/nexo-plugin-echo/.github/workflows/publish.yml@refs/tags/v1.0.0"
    )
    _publish_signed(github_server, private_sigstore, repo, "v1.0.0", version="1.0.0",
                    identity=identity)  # fmt: skip
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    document = refused(result, "signer_untrusted", tmp_path / "plugins")
    assert str(policy) in document["error"]
    assert document["trust_command"] in document["error"]
    assert document["trust_command"].startswith("nexo plugin trust add acme/nexo-plugin-echo ")
    assert "publish\\\\.yml@refs/tags/.+$" in document["entry"]
    assert 'repos = ["nexo-plugin-echo"]' in document["entry"]


# --- the policy file itself ------------------------------------------------------------------


def test_symlinked_or_world_writable_policy_is_warned_about(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = "nexo-plugin-echo"
    github_server.publish(OWNER, repo, "v1.0.0", release_assets(PLUGIN, "1.0.0"))
    real = scheme_policy(tmp_path, private_sigstore).with_name("real.toml")
    (tmp_path / "trusted_keys.toml").rename(real)
    real.write_text('default = "warn"\n')
    real.chmod(0o666)
    link = tmp_path / "trusted_keys.toml"
    link.symlink_to(real)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(link))  # fmt: skip
    assert result.code == 0, result.stderr
    warnings = json.loads(result.stdout)["warnings"]
    assert any("is a symbolic link" in w for w in warnings)
    assert any("writable by every user" in w for w in warnings)


# --- GitHub artifact attestations from the API ------------------------------------------------


def _attested_release(
    server: GitHubServer,
    instance: PrivateSigstore,
    *,
    repository: str = "acme/nexo-plugin-echo",
    decoys: int = 0,
) -> str:
    repo = "nexo-plugin-echo"
    assets = release_assets(PLUGIN, "1.0.0")
    name = asset_name(PLUGIN, "1.0.0")
    digest = hashlib.sha256(assets[name]).hexdigest()
    server.publish(OWNER, repo, "v1.0.0", assets)
    decoy_bundles = [
        instance.attest(
            assets[name],
            identity=f"https://github.com/acme/{repo}/.github/workflows/sbom.yml@refs/tags/v1.0.0",
            predicate_type="https://spdx.dev/Document/v2.3",
        )
        for _ in range(decoys)
    ]
    caller = f"https://github.com/{repository}/.github/workflows/release.yml@refs/tags/v1.0.0"
    real = instance.attest(
        assets[name],
        identity="https://github.com/actions/reusable/.github/workflows/attest.yml@refs/tags/v1",
        repository=repository,
        ref="refs/tags/v1.0.0",
        build_config_uri=caller,
    )
    server.attestation_page_size = 1
    server.publish_attestations(OWNER, repo, digest, [*decoy_bundles, real])
    return repo


def test_attestations_from_the_api_verify_across_pages(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = _attested_release(github_server, private_sigstore, decoys=2)
    policy = scheme_policy(tmp_path, private_sigstore, REUSABLE_SIGNER)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    signature = json.loads(result.stdout)["signature"]
    assert signature["scheme"] == "github-attestation"
    # The SAN (the reusable workflow that signed), the calling workflow beside it.
    assert signature["identity"].endswith("/reusable/.github/workflows/attest.yml@refs/tags/v1")
    assert signature["claims"]["build_config_uri"].endswith("/release.yml@refs/tags/v1.0.0")
    assert signature["claims"]["signer_workflow"] == "actions/reusable/.github/workflows/attest.yml"
    assert len(github_server.requests_to("/attestations/sha256:")) == 3
    receipt = json.loads(
        (tmp_path / "plugins" / f"{PLUGIN}-1.0.0" / ".nexo-install.json").read_text()
    )
    assert receipt["signature"]["scheme"] == "github-attestation"


def test_the_confirmation_screen_shows_where_a_reusable_workflow_signed_for(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """The screen shows the signer (the SAN: the reusable workflow) and, beside it, the
    repository it built and the workflow that started the run, as the receipt records."""
    repo = _attested_release(github_server, private_sigstore)
    policy = scheme_policy(tmp_path, private_sigstore, REUSABLE_SIGNER)
    result = nexo("plugin", "install", f"{OWNER}/{repo}@v1.0.0", "--dry-run", "--dest",
                  str(tmp_path / "plugins"), "--trusted-keys", str(policy),
                  env=cli_env(tmp_path, api=github_server.url), in_process=True)  # fmt: skip
    assert result.code == 0, result.stderr
    lines = result.stderr.splitlines()  # the screen is a note, on stderr
    signer = next(i for i, line in enumerate(lines) if line.startswith("Signer:"))
    assert "/reusable/.github/workflows/attest.yml@refs/tags/v1 " in lines[signer]
    assert lines[signer + 1] == (
        f"Built in:     {OWNER}/{repo}, run by https://github.com/{OWNER}/{repo}"
        "/.github/workflows/release.yml@refs/tags/v1.0.0"
    )


def test_unsigned_under_an_authors_warn_names_the_entry_not_the_default(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """`default = "require"` with the owner's entry saying `mode = "warn"`: the NOT SIGNED
    warning names what made it warn (the entry), not a default that already refuses."""
    github_server.publish(OWNER, "nexo-plugin-echo", "v1.0.0", release_assets(PLUGIN, "1.0.0"))
    policy = scheme_policy(tmp_path, private_sigstore, 'mode = "warn"\n')
    result = run_install(tmp_path, github_server, f"{OWNER}/nexo-plugin-echo@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["signature"]["status"] == "unsigned"
    (warning,) = [w for w in document["warnings"] if "NOT SIGNED" in w]
    assert warning.endswith(
        "installing it unverified (the author entry for 'acme' says `mode = \"warn\"`; set it "
        'to "require" or pass --require-signature to refuse unsigned plugins)'
    )


def test_an_attestation_made_for_another_repository_is_refused(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = _attested_release(github_server, private_sigstore, repository="acme/elsewhere")
    policy = scheme_policy(tmp_path, private_sigstore, REUSABLE_SIGNER)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    document = refused(result, "signer_untrusted", tmp_path / "plugins")
    assert "acme/elsewhere" in document["error"]


def test_no_attestation_falls_through_to_signature_missing(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = "nexo-plugin-echo"
    github_server.publish(OWNER, repo, "v1.0.0", release_assets(PLUGIN, "1.0.0"))
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    refused(result, "signature_missing", tmp_path / "plugins")
    assert github_server.requests_to("/attestations/sha256:")


# --- signed checksums files (GoReleaser) -----------------------------------------------------


def _goreleaser_release(
    server: GitHubServer,
    instance: PrivateSigstore,
    *,
    lines: list[str] | None = None,
    digests: bool = True,
    signed: bool = True,
) -> str:
    repo = "nexo-plugin-echo"
    assets = _goreleaser_assets(instance, repo, lines=lines, signed=signed)
    server.publish(OWNER, repo, "v1.0.0", assets, digests=digests)
    return repo


def _goreleaser_assets(
    instance: PrivateSigstore, repo: str, *, lines: list[str] | None = None, signed: bool = True
) -> dict[str, bytes]:
    """The assets of a GoReleaser-shaped release of ``PLUGIN`` 1.0.0 in ``OWNER/repo``: two
    tarballs, no ``.sha256`` sidecars, one ``checksums.txt`` (``lines``, by default the
    tarballs' true hashes) with its Sigstore bundle when ``signed``."""
    assets = release_assets(PLUGIN, "1.0.0", sidecar=False)
    name = asset_name(PLUGIN, "1.0.0")
    other = asset_name(PLUGIN, "1.0.0", "x86_64-apple-darwin")
    assets[other] = plugin_tarball(PLUGIN, "1.0.0", payload=b"darwin")
    digest = hashlib.sha256(assets[name]).hexdigest()
    listed = lines or [
        f"{hashlib.sha256(assets[other]).hexdigest()}  {other}",
        f"{digest}  {name}",
    ]
    checksums = ("\n".join(listed) + "\n").encode()
    checksums_name = f"{PLUGIN}_1.0.0_checksums.txt"
    assets[checksums_name] = checksums
    if signed:
        bundle = instance.sign(checksums, identity=WORKFLOW.format(repo=repo, tag="v1.0.0"))
        assets[checksums_name + ".sigstore.json"] = json.dumps(bundle).encode()
    return assets


def test_a_signed_checksums_file_vouches_for_the_tarball(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = _goreleaser_release(github_server, private_sigstore)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    signature = json.loads(result.stdout)["signature"]
    assert signature["status"] == "verified"
    assert signature["scheme"] == "checksums-file"
    assert signature["material"].startswith("echo_1.0.0_checksums.txt")


def test_the_signed_checksums_file_that_lists_the_tarball_decides(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """A release with several signed checksums files (a project's CLI binaries in
    ``checksums.txt``, the plugin in ``echo_1.0.0_checksums.txt``): the one that lists the
    tarball vouches for it, whichever name sorts first; one that does not mention the
    tarball says nothing about it."""
    repo = "nexo-plugin-echo"
    assets = release_assets(PLUGIN, "1.0.0", sidecar=False)
    name = asset_name(PLUGIN, "1.0.0")
    identity = WORKFLOW.format(repo=repo, tag="v1.0.0")
    files = {
        "checksums.txt": f"{'0' * 64}  echo-cli_1.0.0_linux_amd64.tar.gz\n".encode(),
        f"{PLUGIN}_1.0.0_checksums.txt": (
            f"{hashlib.sha256(assets[name]).hexdigest()}  {name}\n".encode()
        ),
    }
    for checksums_name, text in files.items():
        assets[checksums_name] = text
        signed = private_sigstore.sign(text, identity=identity)
        assets[checksums_name + ".sigstore.json"] = json.dumps(signed).encode()
    github_server.publish(OWNER, repo, "v1.0.0", assets, digests=True)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    signature = json.loads(result.stdout)["signature"]
    assert signature["status"] == "verified"
    assert signature["scheme"] == "checksums-file"
    assert signature["material"].startswith(f"{PLUGIN}_1.0.0_checksums.txt")


def test_a_goreleaser_release_without_asset_digests_installs_by_its_signed_checksums_file(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """GoReleaser publishes no ``<asset>.sha256``, and a GitHub that lists no asset digests
    (an Enterprise Server, a release older than digests) leaves its ``checksums.txt`` the
    one thing that says what the tarball hashes to: the download is checked against it, then
    the file's signature verified and its line for the tarball required (SPEC §6)."""
    repo = _goreleaser_release(github_server, private_sigstore, digests=False)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["signature"]["status"] == "verified"
    assert document["signature"]["scheme"] == "checksums-file"
    assert (tmp_path / "plugins" / f"{PLUGIN}-1.0.0" / "nexo-plugin.toml").is_file()
    # The checksums file is read once: the bytes that gave the checksum are the ones verified.
    (release,) = github_server.releases[(OWNER, repo)]
    (listing,) = [a for a in release.assets if a.name == f"{PLUGIN}_1.0.0_checksums.txt"]
    asked = github_server.requests_to(f"/assets/{listing.id}") + github_server.requests_to(
        f"/download/v1.0.0/{listing.name}"
    )
    assert len(asked) == 1, asked


@pytest.mark.parametrize("case", ["wrong_hash", "contradicting"])
def test_without_asset_digests_a_checksums_file_the_download_does_not_match_is_a_mismatch(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, case: str
) -> None:
    name = asset_name(PLUGIN, "1.0.0")
    good = hashlib.sha256(plugin_tarball(PLUGIN, "1.0.0")).hexdigest()
    lines = {
        "wrong_hash": [f"{'0' * 64}  {name}"],
        "contradicting": [f"{good}  {name}", f"{'1' * 64}  {name}"],
    }[case]
    repo = _goreleaser_release(github_server, private_sigstore, lines=lines, digests=False)
    policy = scheme_policy(tmp_path, private_sigstore)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    document = refused(result, "checksum_mismatch", plugins)
    assert f"{PLUGIN}_1.0.0_checksums.txt" in document["error"]
    assert tree_snapshot(plugins) == before


def test_without_asset_digests_an_unsigned_checksums_file_is_a_checksum_not_a_signature(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """Unsigned, the checksums file vouches for the bytes as a ``.sha256`` sidecar does,
    never for who made them: a policy that requires a signature still refuses."""
    repo = _goreleaser_release(github_server, private_sigstore, digests=False, signed=False)
    policy = scheme_policy(tmp_path, private_sigstore)
    plugins = tmp_path / "plugins"
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    refused(result, "signature_missing", plugins)
    policy.write_text(policy.read_text().replace('default = "require"', 'default = "warn"'))
    warned = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    assert warned.code == 0, warned.stderr
    document = json.loads(warned.stdout)
    assert document["signature"]["status"] == "unsigned"


def test_a_local_tarball_downloaded_with_its_signed_checksums_file_installs_verified(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """The same release's files downloaded by hand (no ``.sha256`` beside the tarball, the
    checksums file and its bundle are): installed from the directory, verified."""
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    for name, data in _goreleaser_assets(private_sigstore, "nexo-plugin-echo").items():
        (downloads / name).write_bytes(data)
    assert not any(path.name.endswith(".sha256") for path in downloads.iterdir())
    policy = scheme_policy(tmp_path, private_sigstore)
    result = run_install(tmp_path, github_server, str(downloads / asset_name(PLUGIN, "1.0.0")),
                         "--trusted-keys", str(policy))  # fmt: skip
    assert result.code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["signature"]["scheme"] == "checksums-file"


@pytest.mark.parametrize("case", ["wrong_hash", "not_listed", "contradicting"])
def test_a_checksums_file_that_does_not_vouch_is_refused(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, case: str
) -> None:
    name = asset_name(PLUGIN, "1.0.0")
    lines = {
        "wrong_hash": [f"{'0' * 64}  {name}"],
        "not_listed": [f"{'0' * 64}  another.tar.gz"],
        "contradicting": [
            f"{hashlib.sha256(plugin_tarball(PLUGIN, '1.0.0')).hexdigest()}  {name}",
            f"{'1' * 64}  {name}",
        ],
    }[case]
    repo = _goreleaser_release(github_server, private_sigstore, lines=lines)
    policy = scheme_policy(tmp_path, private_sigstore)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    refused(result, "signature_invalid", plugins)
    assert tree_snapshot(plugins) == before


@pytest.mark.parametrize("separator", ["\x0b", "\x1c", "\x85", "\u2028", "\r"])
def test_a_checksums_line_is_not_split_at_other_line_breaks(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    separator: str,
) -> None:
    """``sha256sum -c`` reads one line up to ``\n``: a signed line for another file whose
    name runs on past ``\x85`` or U+2028 into the asset's hash and name lists nothing."""
    name = asset_name(PLUGIN, "1.0.0")
    digest = hashlib.sha256(plugin_tarball(PLUGIN, "1.0.0")).hexdigest()
    lines = [f"{'0' * 64}  another.tar.gz{separator}{digest}  {name}"]
    repo = _goreleaser_release(github_server, private_sigstore, lines=lines)
    policy = scheme_policy(tmp_path, private_sigstore)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    refused(result, "signature_invalid", plugins)
    assert tree_snapshot(plugins) == before


def test_list_json_shows_the_scheme_that_verified_each_plugin(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    repo = _goreleaser_release(github_server, private_sigstore)
    policy = scheme_policy(tmp_path, private_sigstore)
    installed = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0",
                            "--trusted-keys", str(policy))  # fmt: skip
    assert installed.code == 0, installed.stderr
    listed = nexo("plugin", "list", "--json", "--dest", str(tmp_path / "plugins"),
                  env=cli_env(tmp_path), in_process=True)  # fmt: skip
    assert listed.code == 0, listed.stderr
    (plugin,) = json.loads(listed.stdout)["plugins"]
    assert (plugin["signature"], plugin["signature_scheme"]) == ("verified", "checksums-file")


# --- the real public-good attestations, through install ---------------------------------------

REUSABLE = SHARED_FIXTURES / "github-attestations"
MALANCAS_POLICY = """\
schema_version = "1.0"
default = "require"

[[authors]]
owner = "malancas"
identity_regexp = '^https://github\\.com/malancas/attest-demo/\\.github/workflows/.+$'
signer_workflow = "github/artifact-attestations-workflows/.github/workflows/attest.yml"
"""


def _public_good_release(server: GitHubServer, repo: str) -> str:
    """The attested artifact published as a release asset of ``malancas/<repo>`` (it is not
    a plugin tarball: a verified signature lets the install go on to the archive check)."""
    artifact = (REUSABLE / "reusable-workflow-artifact").read_bytes()
    name = "attest-0.0.0-noarch.tar.gz"
    server.publish("malancas", repo, "v0.0.0", {name: artifact}, digests=True)
    bundle = json.loads((REUSABLE / "reusable-workflow-attestation.sigstore.json").read_text())
    server.publish_attestations("malancas", repo, hashlib.sha256(artifact).hexdigest(), [bundle])
    return name


@pytest.mark.parametrize(
    ("repo", "kind"),
    [("attest-demo", "archive_invalid"), ("other", "signer_untrusted")],
)
@skip_unless_present("github-attestations")
def test_public_good_attestation_from_the_api(
    tmp_path: Path, github_server: GitHubServer, repo: str, kind: str
) -> None:
    _public_good_release(github_server, repo)
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(MALANCAS_POLICY)
    result = run_install(tmp_path, github_server, f"malancas/{repo}@v0.0.0",
                         "--trusted-keys", str(policy))  # fmt: skip
    # archive_invalid: the signature step passed and the next step looked at the file.
    document = refused(result, kind, tmp_path / "plugins")
    if kind == "archive_invalid":
        _assert_reusable_signer(document)


@pytest.mark.parametrize(
    ("flip", "kind"), [(False, "archive_invalid"), (True, "signature_invalid")]
)
@skip_unless_present("github-attestations")
def test_public_good_attestation_beside_a_local_file(tmp_path: Path, flip: bool, kind: str) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    data = bytearray((REUSABLE / "reusable-workflow-artifact").read_bytes())
    if flip:
        data[0] ^= 0x01
    tarball = dist / "attest-0.0.0-noarch.tar.gz"
    tarball.write_bytes(bytes(data))
    tarball.with_name(tarball.name + ".sha256").write_text(
        f"{hashlib.sha256(data).hexdigest()}  {tarball.name}\n"
    )
    shutil.copy(
        REUSABLE / "reusable-workflow-attestation.sigstore.json",
        dist / f"{tarball.name}.intoto.jsonl",
    )
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(MALANCAS_POLICY)
    result = nexo("plugin", "install", str(tarball), "--yes", "--json", "--dest",
                  str(tmp_path / "plugins"), "--trusted-keys", str(policy), env=cli_env(tmp_path),
                  in_process=True)  # fmt: skip
    document = refused(result, kind, tmp_path / "plugins")
    if kind == "archive_invalid":
        _assert_reusable_signer(document)


def _assert_reusable_signer(document: dict[str, Any]) -> None:
    """The refusal of the (non-plugin) file still shows who was verified to have signed it."""
    signature = document["signature"]
    assert signature["status"] == "verified"
    assert signature["scheme"] == "github-attestation"
    # The SAN is the identity; the calling workflow is beside it.
    assert signature["identity"].startswith(
        "https://github.com/github/artifact-attestations-workflows/.github/workflows/attest.yml@"
    )
    assert signature["claims"]["build_config_uri"] == (
        "https://github.com/malancas/attest-demo/.github/workflows/shared.yml@refs/heads/main"
    )
    assert signature["claims"]["signer_workflow"] == (
        "github/artifact-attestations-workflows/.github/workflows/attest.yml"
    )


@pytest.mark.parametrize(("status", "kind"), [(403, None), (422, None), (500, "network")])
def test_an_attestations_endpoint_that_cannot_answer(
    tmp_path: Path, github_server: GitHubServer, status: int, kind: str | None
) -> None:
    """A token without access to attestations, or a server without the endpoint, offers no
    attestation (an unsigned release installs under warn); a server error stays an error."""
    repo = "nexo-plugin-echo"
    github_server.publish(OWNER, repo, "v1.0.0", release_assets(PLUGIN, "1.0.0"))
    github_server.fail(status, times=None, path_contains="/attestations/")
    result = run_install(tmp_path, github_server, f"{OWNER}/{repo}@v1.0.0")
    if kind is None:
        assert result.code == 0, result.stderr
        assert json.loads(result.stdout)["signature"]["status"] == "unsigned"
    else:
        refused(result, kind, tmp_path / "plugins")
