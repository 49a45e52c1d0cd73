"""`new --kind microapp`: an extension-shaped project the daemon's extension host loads."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from support.cli import nexo

from nexo_pkg.check.microapp_wire import decode_handshake
from nexo_pkg.core.errors import NexoError
from nexo_pkg.manifest.microapp import id_problem, is_extension_shape
from nexo_pkg.manifest.microapp_model import companion_from_data, microapp_from_data
from nexo_pkg.scaffold.generator import NewProject, create_project

MICROAPP_FILES = [
    ".gitattributes",
    ".github/workflows/release.yml",
    ".gitignore",
    "README.md",
    "bin/greeter",
    "extensions.yaml.example",
    "nexo-plugin.toml",
    "plugin.toml",
    "src/main.py",
    "tests/__init__.py",
    "tests/test_microapp.py",
]


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_microapp_files_and_manifests(tmp_path: Path) -> None:
    dest = tmp_path / "greeter"
    created = create_project(NewProject("greeter", dest=dest, kind="microapp"))
    assert _files(dest) == MICROAPP_FILES
    assert sorted(created.files) == MICROAPP_FILES
    data = tomllib.loads((dest / "plugin.toml").read_text(encoding="utf-8"))
    assert is_extension_shape(data)
    manifest = microapp_from_data(data)
    assert manifest is not None
    assert id_problem(manifest.id) is None
    assert manifest.version == "0.1.0"
    assert manifest.transport_kind == "stdio"
    assert manifest.command == "./bin/greeter"
    assert manifest.tools == ("greeter_hello",)
    companion = companion_from_data(
        tomllib.loads((dest / "nexo-plugin.toml").read_text(encoding="utf-8"))
    )
    assert companion.id == manifest.id
    assert "The Greeter nexo microapp." in (dest / "README.md").read_text(encoding="utf-8")


def test_the_stanza_uses_only_keys_the_daemon_reads(tmp_path: Path) -> None:
    """ExtensionsConfigFile / ExtensionsConfig / ExtensionEntry are deny_unknown_fields
    (crates/config/src/types/extensions.rs:9-74)."""
    dest = tmp_path / "greeter"
    create_project(NewProject("greeter", dest=dest, kind="microapp"))
    stanza = yaml.safe_load((dest / "extensions.yaml.example").read_text(encoding="utf-8"))
    assert list(stanza) == ["extensions"]
    assert set(stanza["extensions"]) <= {"search_paths", "entries"}
    assert all(isinstance(path, str) for path in stanza["extensions"]["search_paths"])
    assert stanza["extensions"]["entries"] == {"greeter": {"capabilities_grant": []}}


def test_main_answers_the_daemons_initialize(tmp_path: Path) -> None:
    """initialize as the host sends it (stdio.rs:787-797) decodes as HandshakeInfo."""
    dest = tmp_path / "greeter"
    create_project(NewProject("greeter", dest=dest, kind="microapp"))
    request = {
        "jsonrpc": "2.0",
        "method": "initialize",
        "params": {"agent_version": "0.1.5", "extension_id": "greeter"},
        "id": 0,
    }
    completed = subprocess.run(
        [str(dest / "bin" / "greeter")],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    reply = json.loads(completed.stdout)
    assert reply["id"] == 0
    decoded = decode_handshake(reply["result"])
    assert not isinstance(decoded, str)
    assert [tool.name for tool in decoded.tools] == ["greeter_hello"]
    assert decoded.tools[0].defaulted == ()
    assert completed.stderr.startswith("[INFO] ")


def test_generated_tests_pass(tmp_path: Path) -> None:
    dest = tmp_path / "greeter"
    create_project(NewProject("greeter", dest=dest, kind="microapp"))
    completed = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-v"],
        cwd=dest,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Ran 4 tests" in completed.stderr


def test_a_microapp_gets_the_plugin_release_workflow_and_its_build_steps_pass(
    tmp_path: Path,
) -> None:
    """A microapp packs, signs and installs as a plugin does: the same workflow (one
    template), whose tag check and test steps pass in the fresh project, which has no
    requirements.txt (the standard library only)."""
    spec = "nexo-pkg==0.1.0"
    microapp = tmp_path / "greeter"
    create_project(NewProject("greeter", dest=microapp, kind="microapp", nexo_pkg_spec=spec))
    plugin = tmp_path / "plugin"
    create_project(NewProject("greeter", dest=plugin, nexo_pkg_spec=spec))
    relative = Path(".github/workflows/release.yml")
    text = (microapp / relative).read_text(encoding="utf-8")
    assert text == (plugin / relative).read_text(encoding="utf-8")
    assert not (microapp / "requirements.txt").exists()
    steps = {
        step.get("name"): step["run"]
        for step in yaml.safe_load(text)["jobs"]["build"]["steps"]
        if "run" in step
    }
    environment = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "GITHUB_REF_NAME": "v0.1.0",
    }
    for name in ("Check the tag matches the manifest version", "Test"):
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", steps[name]],
            cwd=microapp,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, (name, done.stdout + done.stderr)
    refused = subprocess.run(
        ["bash", "-c", steps["Check the tag matches the manifest version"]],
        cwd=microapp,
        env={**environment, "GITHUB_REF_NAME": "v0.2.0"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 1
    assert "does not match the manifest version v0.1.0" in refused.stdout


def test_unknown_kind_is_refused_and_nothing_written(tmp_path: Path) -> None:
    with pytest.raises(NexoError) as caught:
        create_project(NewProject("greeter", dest=tmp_path / "greeter", kind="daemon"))
    assert caught.value.kind == "usage"
    assert "unsupported --kind 'daemon'" in caught.value.message
    assert list(tmp_path.iterdir()) == []


def test_cli_kind_microapp(tmp_path: Path) -> None:
    completed = nexo(
        "plugin", "new", "greeter", "--kind", "microapp", cwd=tmp_path, in_process=True
    )
    assert completed.code == 0, completed.stderr
    assert "created microapp greeter" in completed.stderr
    assert (tmp_path / "greeter" / "extensions.yaml.example").is_file()
    refused = nexo("plugin", "new", "other", "--kind", "x", "--json", cwd=tmp_path, in_process=True)
    assert refused.code == 2
    assert json.loads(refused.stdout)["kind"] == "usage"
    assert not (tmp_path / "other").exists()


def _tag_check(project: Path, tag: str) -> subprocess.CompletedProcess[str]:
    """The scaffolded workflow's tag check, run by bash as GitHub runs it, in ``project``."""
    text = (project / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    [script] = [
        step["run"]
        for step in yaml.safe_load(text)["jobs"]["build"]["steps"]
        if step.get("name") == "Check the tag matches the manifest version"
    ]
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", script],
        cwd=project,
        env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "GITHUB_REF_NAME": tag},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("layout", ["plugin.toml", "nexo-plugin.toml", "both"])
def test_the_release_tag_check_reads_the_manifest_the_tools_read(
    tmp_path: Path, layout: str
) -> None:
    """The tag is checked against the manifest lint and pack read (nexo-plugin.toml before
    plugin.toml, NX006), whichever of the two the project keeps."""
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project, nexo_pkg_spec="nexo-pkg==0.1.0"))
    generated = project / "plugin.toml"
    text = generated.read_text(encoding="utf-8")
    if layout != "plugin.toml":
        (project / "nexo-plugin.toml").write_text(
            text.replace('version = "0.1.0"', 'version = "0.2.0"', 1), encoding="utf-8"
        )
        if layout == "nexo-plugin.toml":
            generated.unlink()
    read = "0.1.0" if layout == "plugin.toml" else "0.2.0"
    manifest = "plugin.toml" if layout == "plugin.toml" else "nexo-plugin.toml"
    accepted = _tag_check(project, f"v{read}")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    refused = _tag_check(project, "v9.9.9")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert refused.stdout == (
        f"::error file={manifest}::tag v9.9.9 does not match the manifest version v{read}\n"
    )
    if layout == "both":  # plugin.toml's version is shadowed, as for lint and pack
        assert _tag_check(project, "v0.1.0").returncode == 1
