"""The attestations API as GitHub answers it: bundles stored behind a ``bundle_url``
(Snappy-compressed, on another host), attestations of a release's checksums file, and no
request at all when signatures are not verified. Real loopback servers, real Sigstore
bundles (the private instance and the public-good fixtures)."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cramjam
import pytest
from support.cli import CliResult, nexo
from support.github_server import BlobServer, GitHubServer, asset_host, github_server
from support.private_sigstore import PrivateSigstore
from support.shared_fixtures import skip_unless_present
from support.tarballs import asset_name, plugin_tarball, release_assets, tree_snapshot

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.github import GitHubClient

from .helpers import SHARED_FIXTURES, cli_env
from .test_install_schemes import MALANCAS_POLICY, OWNER, PLUGIN, WORKFLOW, refused, scheme_policy

__all__ = ["asset_host", "github_server"]

REPO = "nexo-plugin-echo"
TOKEN = "ghp_attestation_test_token"  # noqa: S105 (a test value)
PUBLIC_GOOD = SHARED_FIXTURES / "github-attestations"


def _install(
    tmp_path: Path,
    server: GitHubServer,
    *flags: str,
    source: str = f"{OWNER}/{REPO}@v1.0.0",
    env: dict[str, str] | None = None,
) -> CliResult:
    return nexo("plugin", "install", source, "--yes", "--json", "--dest", str(tmp_path / "plugins"),
                *flags, env={**cli_env(tmp_path, api=server.url), **(env or {})},
                in_process=True)  # fmt: skip


def cramjam_raw(data: bytes) -> bytes:
    return bytes(cramjam.snappy.compress_raw(data))


def _snappy(document: dict[str, Any]) -> bytes:
    return cramjam_raw(json.dumps(document).encode())


def _attestation(instance: PrivateSigstore, data: bytes, *, repo: str = REPO) -> dict[str, Any]:
    return instance.attest(data, identity=WORKFLOW.format(repo=repo, tag="v1.0.0"))


def _release(server: GitHubServer) -> tuple[bytes, str]:
    """An unsigned release of echo 1.0.0: its tarball and the tarball's sha256."""
    assets = release_assets(PLUGIN, "1.0.0")
    server.publish(OWNER, REPO, "v1.0.0", assets)
    tarball = assets[asset_name(PLUGIN, "1.0.0")]
    return tarball, hashlib.sha256(tarball).hexdigest()


# --- bundle_url ---------------------------------------------------------------------------


def test_a_bundle_url_is_followed_without_the_token(
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
) -> None:
    """GitHub answers with ``bundle_url`` only; the bundle lives, compressed, on another host
    that must not receive the API token."""
    tarball, digest = _release(github_server)
    url = asset_host.put("/bundles/1.json.sn", _snappy(_attestation(private_sigstore, tarball)))
    github_server.publish_attestation_entries(
        OWNER, REPO, digest, [{"bundle": None, "bundle_url": url, "repository_id": 1}]
    )
    github_server.require_token(TOKEN)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy),
                      env={"NEXO_GITHUB_TOKEN": TOKEN})  # fmt: skip
    assert result.code == 0, result.stderr
    signature = json.loads(result.stdout)["signature"]
    assert (signature["status"], signature["scheme"]) == ("verified", "github-attestation")
    assert signature["identity"] == WORKFLOW.format(repo=REPO, tag="v1.0.0")
    (fetched,) = asset_host.requests_to("/bundles/")
    assert "authorization" not in fetched.headers
    (asked,) = github_server.requests_to("/attestations/")
    assert asked.headers["authorization"] == f"Bearer {TOKEN}"


def test_inline_bundles_and_bundle_urls_mix_across_pages(
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
) -> None:
    """An attestation of another kind (inline) first, the provenance behind a URL next."""
    tarball, digest = _release(github_server)
    sbom = private_sigstore.attest(
        tarball,
        identity=f"https://github.com/acme/{REPO}/.github/workflows/sbom.yml@refs/tags/v1.0.0",
        predicate_type="https://spdx.dev/Document/v2.3",
    )
    url = asset_host.put("/b/2", _snappy(_attestation(private_sigstore, tarball)))
    github_server.attestation_page_size = 1
    github_server.publish_attestation_entries(
        OWNER, REPO, digest, [{"bundle": sbom}, {"bundle": None, "bundle_url": url}]
    )
    policy = scheme_policy(tmp_path, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy))
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["status"] == "verified"
    assert len(github_server.requests_to("/attestations/")) == 2


@pytest.mark.parametrize(
    ("repo", "kind"), [("attest-demo", "archive_invalid"), ("other", "signer_untrusted")]
)
@skip_unless_present("github-attestations")
def test_public_good_attestation_behind_a_bundle_url(
    tmp_path: Path, github_server: GitHubServer, asset_host: BlobServer, repo: str, kind: str
) -> None:
    """The real reusable-workflow attestation, stored as GitHub stores it. archive_invalid:
    the signature step passed and the archive check looked at the (non-tarball) file."""
    artifact = (PUBLIC_GOOD / "reusable-workflow-artifact").read_bytes()
    github_server.publish(
        "malancas", repo, "v0.0.0", {"attest-0.0.0-noarch.tar.gz": artifact}, digests=True
    )
    bundle = json.loads((PUBLIC_GOOD / "reusable-workflow-attestation.sigstore.json").read_text())
    url = asset_host.put("/public-good", _snappy(bundle))
    github_server.publish_attestation_entries(
        "malancas", repo, hashlib.sha256(artifact).hexdigest(), [{"bundle_url": url}]
    )
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(MALANCAS_POLICY)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy),
                      source=f"malancas/{repo}@v0.0.0")  # fmt: skip
    refused(result, kind, tmp_path / "plugins")
    assert asset_host.requests_to("/public-good")


def _oversized_header() -> bytes:
    return b"\x80\x80\x80\x05" + b"\x00" * 8  # declares 10 MiB


@pytest.mark.parametrize(
    ("case", "kind", "message"),
    [
        ("file_scheme", "network", "not an http(s) URL"),
        ("redirect_to_file", "network", "refusing a redirect"),
        ("redirect_to_ftp", "network", "refusing a redirect"),
        ("not_found", "network", "HTTP 404"),
        ("corrupt", "signature_invalid", "neither JSON nor Snappy"),
        ("declares_too_much", "signature_invalid", "more than the 4194304 allowed"),
        ("too_large", "signature_invalid", "larger than 4194304 bytes"),
        ("not_an_object", "signature_invalid", "not a JSON object"),
        ("missing", "signature_invalid", "neither a bundle nor a bundle_url"),
    ],
)
def test_bundle_urls_that_cannot_be_followed_are_refused(  # noqa: PLR0917 (fixtures)
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
    case: str,
    kind: str,
    message: str,
) -> None:
    tarball, digest = _release(github_server)
    good = _snappy(_attestation(private_sigstore, tarball))
    port = asset_host.port
    choices: dict[str, Callable[[], str | None]] = {
        "file_scheme": lambda: "file:///etc/passwd",
        "redirect_to_file": lambda: asset_host.redirect("/r", "file:///etc/passwd"),
        "redirect_to_ftp": lambda: asset_host.redirect("/r", f"ftp://127.0.0.1:{port}/b"),
        "not_found": lambda: asset_host.url + "/nothing-here",
        "corrupt": lambda: asset_host.put("/b", good[: len(good) // 2]),
        "declares_too_much": lambda: asset_host.put("/b", _oversized_header()),
        "too_large": lambda: asset_host.put("/b", b"\x00" * (4 * 1024 * 1024 + 1)),
        "not_an_object": lambda: asset_host.put("/b", cramjam_raw(b'["a bundle?"]')),
        "missing": lambda: None,
    }
    url = choices[case]()
    entry: dict[str, Any] = {"repository_id": 1} if url is None else {"bundle_url": url}
    github_server.publish_attestation_entries(OWNER, REPO, digest, [entry])
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy))
    document = refused(result, kind, plugins)
    assert message in document["error"]
    assert tree_snapshot(plugins) == before
    assert "Traceback" not in result.stderr


def test_a_stalled_bundle_url_ends_within_the_deadline(
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
) -> None:
    tarball, digest = _release(github_server)
    url = asset_host.put("/slow", _snappy(_attestation(private_sigstore, tarball)))
    asset_host.slow(10.0, path_contains="/slow")
    github_server.publish_attestation_entries(OWNER, REPO, digest, [{"bundle_url": url}])
    policy = scheme_policy(tmp_path, private_sigstore)
    started = time.monotonic()
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy),
                      env={"NEXO_HTTP_TIMEOUT": "1.5"})  # fmt: skip
    elapsed = time.monotonic() - started
    refused(result, "network", tmp_path / "plugins")
    assert elapsed < 9.0


def test_an_http_bundle_url_under_an_https_api_is_refused_before_connecting() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.setblocking(False)
        port = listener.getsockname()[1]
        client = GitHubClient(f"https://127.0.0.1:{port}", None, timeout=5)
        with client, pytest.raises(NexoError) as caught:
            client.fetch_url(f"http://127.0.0.1:{port}/b", what="bundle", max_bytes=1024)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    assert caught.value.kind == "network"
    assert "plain http under the https API" in caught.value.message


# --- no verification, no request --------------------------------------------------------------


@pytest.mark.parametrize("how", ["flag", "policy"])
def test_nothing_is_asked_when_signatures_are_not_verified(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore, how: str
) -> None:
    """--skip-signature-verify (or mode ignore in the policy): neither the attestations
    endpoint nor any signature asset is requested."""
    assets = release_assets(PLUGIN, "1.0.0")
    name = asset_name(PLUGIN, "1.0.0")
    assets[name + ".sigstore.json"] = json.dumps(
        private_sigstore.sign(assets[name], identity=WORKFLOW.format(repo=REPO, tag="v1.0.0"))
    ).encode()
    github_server.publish(OWNER, REPO, "v1.0.0", assets)
    digest = hashlib.sha256(assets[name]).hexdigest()
    github_server.publish_attestations(
        OWNER, REPO, digest, [_attestation(private_sigstore, assets[name])]
    )
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "ignore"\n' if how == "policy" else 'default = "warn"\n')
    flags = ["--skip-signature-verify"] if how == "flag" else []
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy), *flags)
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["status"] == "skipped"
    assert github_server.requests_to("/attestations/") == []
    signature_asset = github_server.asset_api_url(
        github_server.releases[(OWNER, REPO)][0], name + ".sigstore.json"
    )
    assert github_server.requests_to(signature_asset.removeprefix(github_server.url)) == []
    # The same release, verified, does ask: the assertions above can fail.
    (tmp_path / "again").mkdir()
    verifying = scheme_policy(tmp_path / "again", private_sigstore)
    again = _install(tmp_path / "again", github_server, "--trusted-keys", str(verifying))
    assert again.code == 0, again.stderr
    assert github_server.requests_to(signature_asset.removeprefix(github_server.url))


# --- attestations of a checksums file --------------------------------------------------------


def _checksums_release(
    server: GitHubServer, *, tarball_line: str | None = None
) -> tuple[bytes, bytes, str]:
    """A GoReleaser-shaped release: tarballs and an unsigned ``checksums.txt``; returns the
    tarball, the checksums file and its name."""
    assets = release_assets(PLUGIN, "1.0.0", sidecar=False)
    name = asset_name(PLUGIN, "1.0.0")
    other = asset_name(PLUGIN, "1.0.0", "x86_64-apple-darwin")
    assets[other] = plugin_tarball(PLUGIN, "1.0.0", payload=b"darwin")
    line = tarball_line or f"{hashlib.sha256(assets[name]).hexdigest()}  {name}"
    checksums = f"{hashlib.sha256(assets[other]).hexdigest()}  {other}\n{line}\n".encode()
    assets["checksums.txt"] = checksums
    server.publish(OWNER, REPO, "v1.0.0", assets, digests=True)
    return assets[name], checksums, "checksums.txt"


@pytest.mark.parametrize("stored", ["inline", "bundle_url"])
def test_attestations_of_the_checksums_file_vouch_for_the_tarball(
    tmp_path: Path,
    github_server: GitHubServer,
    asset_host: BlobServer,
    private_sigstore: PrivateSigstore,
    stored: str,
) -> None:
    """GoReleaser with ``actions/attest-build-provenance`` on ``checksums.txt``: the API holds
    the attestation under the checksums file's digest, none under the tarball's."""
    tarball, checksums, checksums_name = _checksums_release(github_server)
    checksums_digest = hashlib.sha256(checksums).hexdigest()
    bundle = _attestation(private_sigstore, checksums)
    entry = (
        {"bundle": bundle}
        if stored == "inline"
        else {"bundle_url": asset_host.put("/c", _snappy(bundle))}
    )
    github_server.publish_attestation_entries(OWNER, REPO, checksums_digest, [entry])
    policy = scheme_policy(tmp_path, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy))
    assert result.code == 0, result.stderr
    signature = json.loads(result.stdout)["signature"]
    assert (signature["status"], signature["scheme"]) == ("verified", "checksums-file")
    assert signature["material"].startswith(checksums_name)
    assert checksums_digest in signature["material"]
    asked = [request.path for request in github_server.requests_to("/attestations/")]
    tarball_digest = hashlib.sha256(tarball).hexdigest()
    assert [tarball_digest in path for path in asked] == [True, False]
    assert checksums_digest in asked[1]


@pytest.mark.parametrize(
    ("case", "kind"),
    [
        ("wrong_line", "signature_invalid"),
        ("other_repository", "signer_untrusted"),
        ("about_another_file", "signature_invalid"),
    ],
)
def test_attestations_of_a_checksums_file_that_do_not_vouch(
    tmp_path: Path,
    github_server: GitHubServer,
    private_sigstore: PrivateSigstore,
    case: str,
    kind: str,
) -> None:
    name = asset_name(PLUGIN, "1.0.0")
    line = f"{'0' * 64}  {name}" if case == "wrong_line" else None
    _, checksums, _ = _checksums_release(github_server, tarball_line=line)
    attested = checksums + b"# another file\n" if case == "about_another_file" else checksums
    bundle = private_sigstore.attest(
        attested,
        identity=WORKFLOW.format(repo=REPO, tag="v1.0.0"),
        repository="acme/elsewhere" if case == "other_repository" else None,
    )
    github_server.publish_attestations(OWNER, REPO, hashlib.sha256(checksums).hexdigest(), [bundle])
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    before = tree_snapshot(plugins)
    policy = scheme_policy(tmp_path, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy))
    refused(result, kind, plugins)
    assert tree_snapshot(plugins) == before


def test_the_tarballs_own_attestation_comes_first(
    tmp_path: Path, github_server: GitHubServer, private_sigstore: PrivateSigstore
) -> None:
    """When the API attests the tarball itself, the checksums file's digest is not asked."""
    tarball, _, _ = _checksums_release(github_server)
    github_server.publish_attestations(
        OWNER, REPO, hashlib.sha256(tarball).hexdigest(), [_attestation(private_sigstore, tarball)]
    )
    policy = scheme_policy(tmp_path, private_sigstore)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy))
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["signature"]["scheme"] == "github-attestation"
    assert len(github_server.requests_to("/attestations/")) == 1


# --- the custom-issuer public-good attestation, through install ------------------------------

CUSTOM_POLICY = """\
schema_version = "1.0"
default = "require"

[[authors]]
owner = "too-legit"
identity_regexp = '^https://github\\.com/too-legit/attest/\\.github/workflows/integration\\.yml@refs/heads/main$'
{issuer}"""
HAMMER_TIME = 'oidc_issuer = "https://token.actions.githubusercontent.com/hammer-time"\n'


@pytest.mark.parametrize(
    ("where", "issuer", "kind"),
    [
        ("api", HAMMER_TIME, "archive_invalid"),
        ("api", "", "signer_untrusted"),
        ("local", HAMMER_TIME, "archive_invalid"),
        ("local", "", "signer_untrusted"),
    ],
)
@skip_unless_present("github-attestations")
def test_custom_issuer_attestation_through_install(
    tmp_path: Path, github_server: GitHubServer, where: str, issuer: str, kind: str
) -> None:
    """The enterprise-style issuer is read from the certificate: trusted only when the entry
    names it (archive_invalid: the signature step passed and the archive check ran)."""
    artifact = (PUBLIC_GOOD / "custom-issuer-artifact").read_bytes()
    bundle = (PUBLIC_GOOD / "custom-issuer.sigstore.json").read_text()
    name = "attest-0.0.0-noarch.tar.gz"
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text(CUSTOM_POLICY.format(issuer=issuer))
    if where == "api":
        github_server.publish("too-legit", "attest", "v0.0.0", {name: artifact}, digests=True)
        github_server.publish_attestations(
            "too-legit", "attest", hashlib.sha256(artifact).hexdigest(), [json.loads(bundle)]
        )
        source = "too-legit/attest@v0.0.0"
    else:
        dist = tmp_path / "dist"
        dist.mkdir()
        (dist / name).write_bytes(artifact)
        (dist / f"{name}.sha256").write_text(f"{hashlib.sha256(artifact).hexdigest()}  {name}\n")
        (dist / f"{name}.intoto.jsonl").write_text(bundle.replace("\n", "") + "\n")
        source = str(dist / name)
    result = _install(tmp_path, github_server, "--trusted-keys", str(policy), source=source)
    document = refused(result, kind, tmp_path / "plugins")
    if kind == "signer_untrusted":
        assert "hammer-time" in document["error"]
    else:
        assert document["signature"]["issuer"].endswith("/hammer-time")
        assert document["signature"]["identity"].startswith("https://github.com/too-legit/")
