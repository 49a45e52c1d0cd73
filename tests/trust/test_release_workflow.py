"""Releases made the way the scaffold's workflow and the action make them: the ``.sig`` and
``.cert`` they publish are exactly the signature and certificate of the Sigstore bundle, and
zizmor finds nothing of medium or high severity in either file."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from support.private_sigstore import PrivateSigstore
from support.tarballs import plugin_tarball

from nexo_pkg.scaffold.generator import NewProject, create_project

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
IDENTITY = "https://github.com/acme/nexo-plugin-demo/.github/workflows/release.yml@refs/tags/v0.1.0"


def _scaffolded_workflow(tmp_path: Path) -> Path:
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project))
    return project / ".github" / "workflows" / "release.yml"


def _step(steps: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(step for step in steps if step.get("name") == name)


def _run_step(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> Path:
    """Run a ``run:`` step with bash as the runner does; return its ``$GITHUB_OUTPUT``."""
    output = cwd / "github-output"
    output.write_text("")
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
        cwd=cwd,
        env={
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_OUTPUT": str(output),
            **env,
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return output


def _signed_dist(directory: Path, instance: PrivateSigstore) -> tuple[Path, dict[str, Any]]:
    """A packed tarball and the bundle ``sigstore sign --bundle`` writes beside it."""
    directory.mkdir(parents=True)
    tarball = directory / "demo-0.1.0-noarch.tar.gz"
    tarball.write_bytes(plugin_tarball("demo", "0.1.0"))
    bundle = instance.sign(tarball.read_bytes(), identity=IDENTITY)
    tarball.with_name(tarball.name + ".sigstore.json").write_text(json.dumps(bundle))
    return tarball, bundle


def _assert_same_signing(tarball: Path, bundle: dict[str, Any]) -> None:
    """``.sig``/``.cert`` hold the bundle's signature and certificate, and the signature
    verifies over the tarball with the certificate's public key."""
    signature_text = tarball.with_name(tarball.name + ".sig").read_text()
    certificate = x509.load_pem_x509_certificate(
        tarball.with_name(tarball.name + ".cert").read_bytes()
    )
    assert signature_text == bundle["messageSignature"]["signature"]
    bundled = base64.b64decode(bundle["verificationMaterial"]["certificate"]["rawBytes"])
    assert certificate.public_bytes(serialization.Encoding.DER) == bundled
    key = certificate.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey)
    signature = base64.b64decode(signature_text)
    key.verify(signature, tarball.read_bytes(), ec.ECDSA(hashes.SHA256()))
    # And over nothing else: a changed byte fails.
    with pytest.raises(InvalidSignature):
        key.verify(signature, tarball.read_bytes() + b"x", ec.ECDSA(hashes.SHA256()))


def test_scaffold_workflow_writes_sig_and_cert_from_its_bundle(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    workflow = yaml.safe_load(_scaffolded_workflow(tmp_path).read_text())
    step = _step(workflow["jobs"]["sign"]["steps"], "Write .sig and .cert from the same signing")
    workspace = tmp_path / "workspace"
    tarball, bundle = _signed_dist(workspace / "dist", private_sigstore)
    _run_step(step, workspace, {})
    _assert_same_signing(tarball, bundle)


def test_action_writes_sig_and_cert_from_its_bundle(
    tmp_path: Path, private_sigstore: PrivateSigstore
) -> None:
    action = yaml.safe_load(ACTION.read_text())
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "detached")
    workspace = tmp_path / "workspace"
    tarball, bundle = _signed_dist(workspace / "plugin" / "dist", private_sigstore)
    bundles = f"plugin/dist/{tarball.name}.sigstore.json\n"
    output = _run_step(step, workspace, {"BUNDLES": bundles})
    _assert_same_signing(tarball, bundle)
    listed = output.read_text().splitlines()
    assert f"plugin/dist/{tarball.name}.sig" in listed
    assert f"plugin/dist/{tarball.name}.cert" in listed


def _zizmor() -> str:
    found = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    if found is None:
        pytest.skip("zizmor is not installed (it is in the test extras: pip install zizmor)")
    return found


def test_zizmor_finds_nothing_of_medium_or_high_severity(tmp_path: Path) -> None:
    zizmor = _zizmor()
    workflow = _scaffolded_workflow(tmp_path)
    done = subprocess.run(
        [zizmor, "--offline", "--format", "json", "--min-severity", "medium",
         str(workflow), str(ACTION)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


def test_zizmor_would_catch_a_tag_pinned_action(tmp_path: Path) -> None:
    """The audit is live: the same workflow with one action back on a mutable tag fails."""
    zizmor = _zizmor()
    workflow = _scaffolded_workflow(tmp_path)
    text = workflow.read_text()
    workflow.write_text(
        text.replace(
            "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2",
            "actions/checkout@v4",
        )
    )
    done = subprocess.run(
        [zizmor, "--offline", "--format", "json", "--min-severity", "medium", str(workflow)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    findings = json.loads(done.stdout)
    assert any(finding["ident"] == "unpinned-uses" for finding in findings)


def test_scaffold_workflow_attests_and_publishes_the_sbom_pack_wrote(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    """The sign job finds exactly the SBOM ``nexo plugin pack`` wrote (signing has already
    put its ``.sigstore.json``/``.sig``/``.cert`` beside every asset), hands it to
    actions/attest-sbom, pinned by commit SHA, for the tarball as subject, after the build
    provenance and with the permissions attesting needs; the publish job uploads it as a
    release asset with the rest of dist/."""
    from nexo_pkg.pack.build import PackOptions, pack

    workflow_path = _scaffolded_workflow(tmp_path)
    project = workflow_path.parents[2]
    workspace = tmp_path / "workspace"
    result = pack(PackOptions(project=project, out=workspace / "dist", source_date_epoch=1))
    written = [asset.path for asset in result.assets]
    [sbom] = [path for path in written if path.name.endswith(".cdx.json")]
    for asset in written:
        for suffix in (".sigstore.json", ".sig", ".cert"):
            asset.with_name(asset.name + suffix).write_text("{}")
    workflow = yaml.safe_load(workflow_path.read_text())
    sign = workflow["jobs"]["sign"]
    assert sign["permissions"] == {"id-token": "write", "attestations": "write"}
    steps = sign["steps"]
    found = _run_step(_step(steps, "Find the SBOM pack wrote"), workspace, {})
    assert found.read_text().splitlines() == [f"path=dist/{sbom.name}"]

    names = [step.get("name") for step in steps]
    attest = _step(steps, "Attest the SBOM")
    assert names.index("Attest build provenance") < names.index("Attest the SBOM")
    action, _, pin = attest["uses"].partition("@")
    assert action == "actions/attest-sbom"
    assert re.fullmatch(r"[0-9a-f]{40}", pin), pin
    assert attest["with"]["sbom-path"] == "${{ steps.sbom.outputs.path }}"
    assert _step(steps, "Find the SBOM pack wrote")["id"] == "sbom"
    subjects = sorted(workspace.glob(attest["with"]["subject-path"]))
    assert subjects == [result.tarball.path]

    # What the sign job hands on, the publish job uploads, SBOM included.
    uploaded = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert uploaded["with"]["path"] == "dist/"
    publish = _step(workflow["jobs"]["publish"]["steps"], "Upload to the release")
    assert 'gh release upload "$GITHUB_REF_NAME" dist/*' in publish["run"]
    assert sbom.name in {path.name for path in (workspace / "dist").glob("*")}


def test_scaffold_readme_says_how_to_check_the_sbom_attestation(tmp_path: Path) -> None:
    """actions/attest-sbom signs a CycloneDX SBOM under the predicate type
    ``https://cyclonedx.org/bom``; ``gh attestation verify`` checks only SLSA provenance
    unless told that type, so the README gives both commands."""
    workflow = _scaffolded_workflow(tmp_path)
    readme = (workflow.parents[2] / "README.md").read_text(encoding="utf-8")
    command = "gh attestation verify demo-<version>-noarch.tar.gz --repo OWNER/nexo-plugin-demo"
    assert f"{command}\n" in readme
    assert f"{command} \\\n  --predicate-type https://cyclonedx.org/bom\n" in readme
