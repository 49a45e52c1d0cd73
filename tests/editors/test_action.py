"""The composite GitHub Action (``action.yml``) and the repository's workflows.

actionlint runs over the workflows in tests/editors/test_actionlint.py. Here the files are
checked three more ways: check-jsonschema's vendored GitHub schemas (when installed), a
structure check of the action, and a small local runner that executes the action's ``run:``
steps with bash exactly as the runner would (inputs through ``env``, ``$GITHUB_OUTPUT``,
``if:`` conditions, skipping later steps after a failure unless ``always()``), on a real plugin
project. ``uses:`` steps (setup-python, upload-sarif) and the pip install of the action itself
are recorded, not run: this virtualenv already has nexo-pkg installed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.shared_fixtures import require_shared_fixture

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
BIN = Path(sys.executable).parent

GOOD = """\
[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "A demo plugin."
min_nexo_version = ">=0.1.0"
"""
BAD = GOOD.replace('id = "demo"', 'id = "Demo"')


def _action() -> dict[str, Any]:
    loaded = yaml.safe_load(ACTION.read_text("utf-8"))
    assert isinstance(loaded, dict)
    return loaded


# -- static checks --------------------------------------------------------------------------


def test_action_structure() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert set(inputs) >= {"path", "pack", "sign", "format", "python-version", "sarif"}
    assert inputs["path"]["default"] == "."
    assert inputs["pack"]["default"] == "false"
    assert inputs["sign"]["default"] == "false"
    assert inputs["format"]["default"] == "github"
    steps = action["runs"]["steps"]
    ids = {step["id"] for step in steps if "id" in step}
    text = ACTION.read_text("utf-8")
    for name in re.findall(r"inputs\.([A-Za-z0-9_-]+)", text):
        assert name in inputs, f"undeclared input {name}"
    for name in re.findall(r"steps\.([A-Za-z0-9_-]+)\.", text):
        assert name in ids, f"unknown step {name}"
    for output in action["outputs"].values():
        assert EXPRESSION.fullmatch(output["value"])
    for step in steps:
        assert ("run" in step) != ("uses" in step)
        if "run" in step:
            assert step["shell"] == "bash", "composite run steps must name their shell"
            # Inputs reach scripts through env, never pasted into the script (injection).
            assert "${{" not in step["run"], step["name"]
        else:
            # Pinned by commit SHA, its version in a comment (a tag could be moved).
            assert re.fullmatch(r"[\w-]+/[\w/-]+@[0-9a-f]{40}", step["uses"]), step["uses"]
            assert re.search(re.escape(step["uses"]) + r" # v\d", text), step["uses"]
    uses = {step["uses"].split("@")[0] for step in steps if "uses" in step}
    assert uses == {
        "actions/setup-python",
        "github/codeql-action/upload-sarif",
        "actions/attest-build-provenance",
        "actions/attest-sbom",
    }


def _placeholder(script: str) -> str:
    return EXPRESSION.sub("placeholder", script)


def test_run_scripts_parse_with_bash() -> None:
    for step in _action()["runs"]["steps"]:
        if "run" in step:
            done = subprocess.run(
                ["bash", "-n"], input=step["run"], capture_output=True, text=True, check=False
            )
            assert done.returncode == 0, f"{step['name']}: {done.stderr}"


def test_workflows_are_well_formed() -> None:
    assert WORKFLOWS
    for workflow in WORKFLOWS:
        document = yaml.safe_load(workflow.read_text("utf-8"))
        # PyYAML reads the bare key `on` as the boolean True (YAML 1.1).
        assert "on" in document or True in document, workflow.name
        for name, job in document["jobs"].items():
            assert "runs-on" in job or "uses" in job, f"{workflow.name}: job {name}"
            for step in job.get("steps", []):
                assert ("run" in step) != ("uses" in step), f"{workflow.name}: {step}"
                if "run" in step:
                    check = subprocess.run(
                        ["bash", "-n"],
                        input=_placeholder(step["run"]),
                        capture_output=True,
                        text=True,
                        check=False,
                    )
                    assert check.returncode == 0, f"{workflow.name}: {check.stderr}"


def _check_jsonschema() -> str:
    found = shutil.which("check-jsonschema", path=str(BIN)) or shutil.which("check-jsonschema")
    if found is None:
        pytest.skip("check-jsonschema is not installed (it is in the dev extras)")
    return found


@pytest.mark.parametrize(
    ("schema", "files"),
    [("vendor.github-actions", [ACTION]), ("vendor.github-workflows", WORKFLOWS)],
    ids=["action", "workflows"],
)
def test_files_match_github_schemas(schema: str, files: list[Path]) -> None:
    done = subprocess.run(
        [_check_jsonschema(), "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# -- a local runner for the composite action ------------------------------------------------


@dataclass
class Run:
    """What happened when the action ran: per step id/name, its outcome and outputs."""

    outcomes: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    recorded_uses: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    action_outputs: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return "failure" in self.outcomes.values()


def _parse_outputs(text: str) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value: list[str] = []
            for item in lines:
                if item == delimiter:
                    break
                value.append(item)
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value_text = line.split("=", 1)
            outputs[name] = value_text
    return outputs


class LocalRunner:
    def __init__(self, workspace: Path, temp: Path, inputs: dict[str, str]) -> None:
        action = _action()
        self.steps: list[dict[str, Any]] = action["runs"]["steps"]
        self.declared_outputs: dict[str, Any] = action["outputs"]
        self.inputs = {
            name: str(spec.get("default", "")) for name, spec in action["inputs"].items()
        }
        self.inputs.update(inputs)
        self.workspace = workspace
        self.temp = temp
        self.run = Run()

    def value(self, expression: str) -> str:
        if match := re.fullmatch(r"inputs\.([\w-]+)", expression):
            return self.inputs[match.group(1)]
        if match := re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression):
            return self.run.outputs.get(match.group(1), {}).get(match.group(2), "")
        if expression == "github.action_path":
            return str(ROOT)
        if expression == "runner.temp":
            return str(self.temp)
        raise AssertionError(f"the local runner does not know `{expression}`")

    def substitute(self, text: str) -> str:
        return EXPRESSION.sub(lambda match: self.value(match.group(1)), text)

    def condition(self, text: str | None, *, failed: bool) -> bool:
        if text is None:
            return not failed
        expression = EXPRESSION.fullmatch(text.strip())
        body = expression.group(1) if expression else text
        terms = [term.strip() for term in body.split("&&")]
        if "always()" not in terms and failed:
            return False
        for term in terms:
            if term == "always()":
                continue
            match = re.fullmatch(r"(\S+) (==|!=) '([^']*)'", term)
            assert match, f"the local runner does not know the condition `{term}`"
            left = self.value(match.group(1))
            if (left == match.group(3)) != (match.group(2) == "=="):
                return False
        return True

    def execute(self) -> Run:
        path = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
        for step in self.steps:
            key = step.get("id", step["name"])
            if not self.condition(step.get("if"), failed=self.run.failed):
                self.run.outcomes[key] = "skipped"
                continue
            if "uses" in step or key == "install":
                with_values = {k: self.substitute(str(v)) for k, v in step.get("with", {}).items()}
                self.run.recorded_uses.append((step.get("uses", key), with_values))
                self.run.outcomes[key] = "success"
                continue
            output_file = self.temp / f"output-{key}"
            output_file.write_text("", encoding="utf-8")
            env = {
                **os.environ,
                "PATH": path,
                "GITHUB_OUTPUT": str(output_file),
                "RUNNER_TEMP": str(self.temp),
                "NO_COLOR": "1",
            }
            env.update({k: self.substitute(str(v)) for k, v in step.get("env", {}).items()})
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                check=False,
                timeout=300,
            )
            self.run.logs[key] = done.stdout + done.stderr
            self.run.outcomes[key] = "success" if done.returncode == 0 else "failure"
            self.run.outputs[key] = _parse_outputs(output_file.read_text("utf-8"))
        for name, spec in self.declared_outputs.items():
            self.run.action_outputs[name] = self.substitute(spec["value"])
        return self.run


def _project(tmp_path: Path, manifest: str) -> Path:
    workspace = tmp_path / "workspace"
    plugin = workspace / "plugin"
    (plugin / "src").mkdir(parents=True)
    (plugin / "nexo-plugin.toml").write_text(manifest, encoding="utf-8")
    (plugin / "src" / "main.py").write_text("print('demo')\n", encoding="utf-8")
    (tmp_path / "temp").mkdir()
    return workspace


def _run(tmp_path: Path, manifest: str, **inputs: str) -> Run:
    workspace = _project(tmp_path, manifest)
    return LocalRunner(workspace, tmp_path / "temp", {"path": "plugin", **inputs}).execute()


def test_lint_annotates_and_fails_on_a_bad_manifest(tmp_path: Path) -> None:
    run = _run(tmp_path, BAD, pack="true")
    assert run.outcomes["inputs"] == "success"
    assert run.outcomes["lint"] == "failure"
    assert "::error file=plugin/nexo-plugin.toml,line=2,col=6" in run.logs["lint"]
    assert run.outcomes["pack"] == "skipped"
    assert run.action_outputs["tarball"] == ""


def test_pack_outputs_the_tarball_and_its_sha256(tmp_path: Path) -> None:
    run = _run(tmp_path, GOOD, pack="true")
    assert not run.failed, run.logs
    assert run.outcomes["sign"] == "skipped"
    workspace = tmp_path / "workspace"
    tarball = workspace / run.action_outputs["tarball"]
    assert tarball.name == "demo-0.1.0-noarch.tar.gz"
    assert tarball.is_file()
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert run.action_outputs["sha256"] == digest
    assets = run.action_outputs["assets"].splitlines()
    assert [Path(asset).name for asset in assets] == [
        "demo-0.1.0-noarch.tar.gz",
        "demo-0.1.0-noarch.tar.gz.sha256",
        "nexo-plugin.toml",
        "demo-0.1.0-noarch.cdx.json",
    ]
    assert all((workspace / asset).is_file() for asset in assets)
    assert run.action_outputs["sbom"] == assets[3]
    sidecar = (workspace / assets[1]).read_text("utf-8")
    assert sidecar == f"{digest}  demo-0.1.0-noarch.tar.gz\n"


def test_out_input_moves_the_assets(tmp_path: Path) -> None:
    run = _run(tmp_path, GOOD, pack="true", out="release-assets")
    assert not run.failed, run.logs
    assert run.action_outputs["tarball"].startswith("release-assets/")


def test_sarif_is_written_and_uploaded_even_when_lint_fails(tmp_path: Path) -> None:
    run = _run(tmp_path, BAD, sarif="true")
    assert run.outcomes["lint"] == "failure"
    report = Path(run.action_outputs["sarif-file"])
    assert report.parent == tmp_path / "temp"
    sarif = json.loads(report.read_text("utf-8"))
    assert sarif["version"] == "2.1.0"
    assert sarif["runs"][0]["results"]
    uploads = [with_ for uses, with_ in run.recorded_uses if "upload-sarif" in uses]
    assert uploads == [{"sarif_file": str(report), "category": "nexo-plugin-lint"}]


def test_clean_lint_without_sarif_uploads_nothing(tmp_path: Path) -> None:
    run = _run(tmp_path, GOOD)
    assert not run.failed, run.logs
    assert run.outcomes["pack"] == "skipped"
    assert not [uses for uses, _ in run.recorded_uses if "upload-sarif" in uses]


WARNED = GOOD + '\n[plugin.sandbox]\nnetwork = "deny"\n'


def test_warnings_annotate_and_pass_unless_strict(tmp_path: Path) -> None:
    """A sandbox table that is not enabled is a warning: annotated, the job goes on and packs;
    with `strict: true` the same finding fails the lint (the SARIF report is still uploaded)."""
    run = _run(tmp_path / "lenient", WARNED, pack="true")
    assert not run.failed, run.logs
    assert "::warning file=plugin/nexo-plugin.toml,line=8," in run.logs["lint"]
    assert "title=NX140 " in run.logs["lint"]
    assert run.outcomes["pack"] == "success"
    strict = _run(tmp_path / "strict", WARNED, pack="true", strict="true", sarif="true")
    assert strict.outcomes["lint"] == "failure"
    assert "::warning file=plugin/nexo-plugin.toml,line=8," in strict.logs["lint"]
    assert strict.outcomes["pack"] == "skipped"
    assert not (tmp_path / "strict" / "workspace" / "plugin" / "dist").exists()
    report = json.loads(Path(strict.action_outputs["sarif-file"]).read_text("utf-8"))
    assert [result["ruleId"] for result in report["runs"][0]["results"]] == ["NX140"]
    assert [uses for uses, _ in strict.recorded_uses if "upload-sarif" in uses]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_format_input_picks_the_log_report(tmp_path: Path, fmt: str) -> None:
    run = _run(tmp_path, BAD, format=fmt)
    assert run.outcomes["lint"] == "failure"
    log = run.logs["lint"]
    assert "::error" not in log
    if fmt == "text":
        assert log.startswith("plugin/nexo-plugin.toml:2:6: NX100 ")
        return
    report = json.loads(log)
    if fmt == "json":
        assert [f["path"] for f in report["files"]] == ["plugin/nexo-plugin.toml"]
        assert [d["code"] for d in report["files"][0]["diagnostics"]] == ["NX100"]
    else:
        assert [r["ruleId"] for r in report["runs"][0]["results"]] == ["NX100"]


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"sign": "true"}, "sign: true needs pack: true"),
        ({"pack": "yes"}, "input pack must be true or false"),
        ({"format": "xml"}, "input format must be github, text, json or sarif"),
    ],
)
def test_bad_inputs_stop_before_anything_runs(
    tmp_path: Path, inputs: dict[str, str], message: str
) -> None:
    run = _run(tmp_path, GOOD, **inputs)
    assert run.outcomes["inputs"] == "failure"
    assert message in run.logs["inputs"]
    assert {key: outcome for key, outcome in run.outcomes.items() if outcome != "skipped"} == {
        "inputs": "failure"
    }
    assert not (tmp_path / "workspace" / "plugin" / "dist").exists()


def _doc_blocks(language: str) -> list[str]:
    text = (ROOT / "docs" / "editors.md").read_text("utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_documented_workflows_match_the_github_schema(tmp_path: Path) -> None:
    workflows = [block for block in _doc_blocks("yaml") if "jobs:" in block]
    assert len(workflows) == 2
    paths = []
    for number, block in enumerate(workflows):
        path = tmp_path / f"workflow{number}.yml"
        path.write_text(block, encoding="utf-8")
        paths.append(path)
        for step in next(iter(yaml.safe_load(block)["jobs"].values()))["steps"]:
            if "run" in step:
                check = subprocess.run(
                    ["bash", "-n"], input=step["run"], capture_output=True, text=True, check=False
                )
                assert check.returncode == 0, check.stderr
            if step.get("uses", "").startswith("nexo-pkg/nexo-pkg@"):
                assert set(step.get("with", {})) <= set(_action()["inputs"])
    done = subprocess.run(
        [_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_documented_pre_commit_config_is_valid(tmp_path: Path) -> None:
    [config] = [block for block in _doc_blocks("yaml") if block.startswith("repos:")]
    path = tmp_path / ".pre-commit-config.yaml"
    path.write_text(config, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert yaml.safe_load(config)["repos"][0]["hooks"] == [{"id": "nexo-plugin-lint"}]


@pytest.mark.parametrize("shape", ["chain", "certificate"])
def test_detached_signature_and_certificate_come_from_the_bundle(
    tmp_path: Path, shape: str
) -> None:
    """The step after signing writes `<asset>.sig` and `<asset>.cert` from each bundle: the
    signature verifies the asset under the certificate's key, and the certificate is the
    bundle's leaf. Run on a real public-good bundle, in the v0.2 shape (`x509CertificateChain`)
    and the v0.3 shape sigstore 4 writes (`certificate`)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import Encoding

    wheel_name = "rfc8785-0.1.2-py3-none-any.whl"
    wheel = require_shared_fixture("sigstore", wheel_name)
    bundle = json.loads(
        require_shared_fixture("sigstore", f"{wheel_name}.sigstore.json").read_text("utf-8")
    )
    material = bundle["verificationMaterial"]
    leaf = material["x509CertificateChain"]["certificates"][0]
    if shape == "certificate":
        del material["x509CertificateChain"]
        material["certificate"] = leaf
    workspace = _project(tmp_path, GOOD)
    asset = workspace / "plugin" / "dist" / wheel_name
    asset.parent.mkdir()
    asset.write_bytes(wheel.read_bytes())
    bundle_path = asset.parent / f"{wheel_name}.sigstore.json"
    bundle_path.write_text(json.dumps(bundle), encoding="utf-8")

    runner = LocalRunner(workspace, tmp_path / "temp", {"path": "plugin", "pack": "true"})
    runner.run.outputs["sign"] = {"bundles": f"plugin/dist/{wheel_name}.sigstore.json\n"}
    runner.steps = [step for step in runner.steps if step.get("id") == "detached"]
    runner.inputs["sign"] = "true"
    run = runner.execute()
    assert run.outcomes == {"detached": "success"}, run.logs
    assert run.action_outputs["signatures"].splitlines() == [
        f"plugin/dist/{wheel_name}.sig",
        f"plugin/dist/{wheel_name}.cert",
    ]
    certificate = x509.load_pem_x509_certificate((asset.parent / f"{wheel_name}.cert").read_bytes())
    assert certificate.public_bytes(Encoding.DER) == base64.b64decode(leaf["rawBytes"])
    signature = base64.b64decode((asset.parent / f"{wheel_name}.sig").read_text("ascii"))
    key = certificate.public_key()
    assert isinstance(key, ec.EllipticCurvePublicKey)
    key.verify(signature, wheel.read_bytes(), ec.ECDSA(hashes.SHA256()))
