"""Sigstore is imported only when signature material is present (checked in fresh processes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from support.shared_fixtures import skip_unless_present

from .helpers import FIXTURES, SHARED_FIXTURES, VECTOR_ARTIFACT

SCRIPT = """
import json, sys
from pathlib import Path
from nexo_pkg.trust.entry import verify_asset_signature
from nexo_pkg.trust.policy import TrustPolicy, lint_policy_source

artifact = Path(sys.argv[1])
material = json.loads(sys.argv[2])
lint_policy_source('default = "warn"\\n', path="trusted_keys.toml")
before = any(name == "sigstore" or name.startswith("sigstore.") for name in sys.modules)
outcome = verify_asset_signature(
    artifact,
    asset_name=artifact.name,
    material={name: Path(path) for name, path in material.items()},
    owner="trailofbits",
    repo="rfc8785.py",
    policy=TrustPolicy(),
    mode=sys.argv[3],
)
after = any(name == "sigstore" or name.startswith("sigstore.") for name in sys.modules)
print(json.dumps({"before": before, "after": after, "status": outcome.status}))
"""


def _run(tmp_path: Path, material: dict[str, str], mode: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(FIXTURES / VECTOR_ARTIFACT), json.dumps(material), mode],
        capture_output=True,
        text=True,
        check=True,
        env={"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"},
    )
    document: dict[str, object] = json.loads(result.stdout)
    return document


def test_unsigned_install_never_imports_sigstore(tmp_path: Path) -> None:
    assert _run(tmp_path, {}, "warn") == {"before": False, "after": False, "status": "unsigned"}


def test_ignore_never_imports_sigstore_even_with_material(tmp_path: Path) -> None:
    bundle = FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json"
    assert _run(tmp_path, {bundle.name: str(bundle)}, "ignore") == {
        "before": False,
        "after": False,
        "status": "skipped",
    }


@skip_unless_present("sigstore")
def test_a_bundle_imports_sigstore_only_to_check_it(tmp_path: Path) -> None:
    """sigstore-python is loaded once a signature is checked, not before."""
    bundle = FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json"
    # Verified cryptographically, but no author entry under warn: recorded as unsigned.
    assert _run(tmp_path, {bundle.name: str(bundle)}, "warn") == {
        "before": False,
        "after": True,
        "status": "unsigned",
    }


def test_lint_cli_never_imports_sigstore(tmp_path: Path) -> None:
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('default = "warn"\n')
    code = (
        "import sys, runpy\n"
        "sys.argv = ['nexo', 'plugin', 'lint', sys.argv[1]]\n"
        "try:\n    runpy.run_module('nexo_pkg', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "print(any(m == 'sigstore' or m.startswith('sigstore.') for m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(policy)], capture_output=True, text=True, check=False
    )
    assert result.stdout.strip().splitlines()[-1] == "False", result.stderr


# `nexo plugin trust verify` run as the CLI runs it, reporting which verifiers it loaded.
VERIFY_CLI = """
import json, runpy, sys
sys.argv = ['nexo', 'plugin', 'trust', 'verify', *sys.argv[1:]]
try:
    runpy.run_module('nexo_pkg', run_name='__main__')
except SystemExit as exit:
    code = exit.code
prefix = 'nexo_pkg.trust.verifiers.'
loaded = sorted(m.removeprefix(prefix) for m in sys.modules if m.startswith(prefix))
print(json.dumps({'code': code, 'verifiers': loaded}))
"""


def _verify_cli(tmp_path: Path, *args: str) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", VERIFY_CLI, *args],
        capture_output=True,
        text=True,
        check=True,
        env={"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin",
             "NEXO_HOME": str(tmp_path / "home"), "PYTHONPATH": ":".join(sys.path)},
    )  # fmt: skip
    document: dict[str, object] = json.loads(result.stdout.splitlines()[-1])
    return document


@skip_unless_present("github-attestations")
def test_an_attestation_verify_loads_neither_the_legacy_nor_the_bundle_verifier(
    tmp_path: Path,
) -> None:
    """A GitHub attestation is verified by the attestation verifier through sigstore-python
    (``common``): neither the legacy cosign verifier, the message-signature verifier nor the
    checksums-file check is imported for it."""
    attestations = SHARED_FIXTURES / "github-attestations"
    document = _verify_cli(
        tmp_path,
        str(attestations / "reusable-workflow-artifact"),
        "--bundle", str(attestations / "reusable-workflow-attestation.sigstore.json"),
        "--repo", "malancas/attest-demo",
        "--signer-workflow", "github/artifact-attestations-workflows/.github/workflows/attest.yml",
    )  # fmt: skip
    assert document == {
        "code": 0,
        "verifiers": ["attestation", "claims", "common", "rootkeys"],
    }


@skip_unless_present("sigstore")
def test_a_bundle_verify_loads_neither_the_legacy_nor_the_attestation_verifier(
    tmp_path: Path,
) -> None:
    bundle = FIXTURES / f"{VECTOR_ARTIFACT}.sigstore.json"
    document = _verify_cli(
        tmp_path,
        str(FIXTURES / VECTOR_ARTIFACT),
        "--bundle", str(bundle),
        "--repo", "trailofbits/rfc8785.py",
    )  # fmt: skip
    assert document == {"code": 0, "verifiers": ["bundle", "claims", "common", "rootkeys"]}


def test_a_legacy_cosign_bundle_loads_the_legacy_verifier(tmp_path: Path) -> None:
    """The control: the scheme that needs the legacy verifier still gets it (and refuses a
    bundle that is not valid legacy material, with exit 1)."""
    artifact = tmp_path / "artifact.bin"
    artifact.write_bytes(b"payload")
    legacy = tmp_path / "artifact.bin.bundle"
    legacy.write_text(json.dumps({"base64Signature": "AAAA", "cert": "", "rekorBundle": {}}))
    document = _verify_cli(tmp_path, str(artifact), "--bundle", str(legacy), "--owner", "acme")
    assert document["code"] == 1
    assert "cosign_legacy" in document["verifiers"]  # type: ignore[operator]
