"""Which commands run on which OS (SPEC, Platforms): the author commands work where Windows's
CPython lacks the POSIX names, the commands that manage a plugin root refuse there at once.

Each run is a real ``python -m nexo_pkg`` child under the Windows shim
(``tests/support/windows_shim.py``), whatever ``--windows-shim`` says for this process.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from support import windows_shim
from support.cli import CliResult, clean_env, nexo
from support.shared_fixtures import require_shared_fixture
from support.tarballs import write_plugin

REPO = Path(__file__).resolve().parents[2]


def _on_windows(args: list[str], cwd: Path, **extra: str) -> CliResult:
    env = clean_env(**extra)
    windows_shim.child_environment(env)
    result = nexo(*args, env=env, cwd=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_author_commands_run_without_the_posix_names(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    created = _on_windows(["plugin", "new", "demo", "--lang", "python"], tmp_path)
    assert created.code == 0, created.stderr
    project = tmp_path / "demo"
    linted = _on_windows(["plugin", "lint", "--format", "json", "plugin.toml"], project)
    assert linted.code == 0, linted.stderr
    # The project's development launcher is a bash script too: check runs src/main.py.
    developed = _on_windows(["plugin", "check", "--json", "."], project)
    assert developed.code == 0, developed.stdout + developed.stderr
    assert json.loads(developed.stdout)["plugin"]["command"][1].endswith("main.py")
    schema = _on_windows(["plugin", "schema"], project)
    assert schema.code == 0, schema.stderr
    assert json.loads(schema.stdout)["$schema"].startswith("https://json-schema.org/")
    packed = _on_windows(["plugin", "pack", "--json"], project, **offline_pip_env)
    assert packed.code == 0, packed.stderr
    assert json.loads(packed.stdout)["ok"] is True
    tarball = project / "dist" / "demo-0.1.0-noarch.tar.gz"
    assert tarball.is_file()
    # The packed launcher is a bash script, which Windows cannot run: check runs the Python
    # entry it would run (lib/plugin/main.py), and says so.
    checked = _on_windows(["plugin", "check", "--json", str(tarball)], project)
    assert checked.code == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)
    assert report["ok"] is True
    assert report["plugin"]["command"][1].endswith("main.py")
    warnings = [c["detail"] for c in report["checks"] if c["status"] == "warn"]
    assert any("bin/demo is a shell script, which Windows cannot run" in w for w in warnings)


def test_a_microapp_is_checked_on_windows_through_its_python_entry(
    tmp_path: Path, offline_pip_env: dict[str, str]
) -> None:
    """A microapp's ``[transport] command`` is a bash launcher (``./bin/notes``) in the project
    and in the tarball, which Windows cannot spawn: ``check`` runs the Python entry it runs,
    with the plugin's warning, and refuses in one sentence when there is none."""
    created = _on_windows(["plugin", "new", "notes", "--kind", "microapp"], tmp_path)
    assert created.code == 0, created.stderr
    project = tmp_path / "notes"
    packed = _on_windows(["plugin", "pack", "--json"], project, **offline_pip_env)
    assert packed.code == 0, packed.stderr
    tarball = project / "dist" / "notes-0.1.0-noarch.tar.gz"
    for target, entry in ((".", "src/main.py"), (str(tarball), "lib/plugin/main.py")):
        checked = _on_windows(["plugin", "check", "--json", target], project)
        assert checked.code == 0, checked.stdout + checked.stderr
        report = json.loads(checked.stdout)
        assert report["ok"] is True
        assert report["kind"] == "microapp"
        command = report["plugin"]["command"]
        assert Path(command[0]).parent == Path(sys.executable).parent, command
        assert command[1].replace("\\", "/").endswith(entry), command
        warnings = [c["detail"] for c in report["checks"] if c["status"] == "warn"]
        assert any(
            f"bin/notes is a shell script, which Windows cannot run: checking {entry}" in w
            for w in warnings
        ), warnings
    (project / "src" / "main.py").unlink()
    refused = _on_windows(["plugin", "check", "."], project)
    assert refused.code == 2, refused.stdout + refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "bin/notes is a script Windows cannot run" in line, line
    assert line.endswith(" [target_invalid]"), line


def test_trust_verify_runs_on_windows(tmp_path: Path) -> None:
    """``trust verify`` is one of the commands SPEC names for all three systems: a real
    Sigstore bundle verifies offline, and a file it does not sign is refused (exit 1), with no
    home or policy created."""
    artifact = require_shared_fixture("sigstore", "rfc8785-0.1.2-py3-none-any.whl")
    bundle = artifact.with_name(artifact.name + ".sigstore.json")
    home = tmp_path / "home"
    args = ["plugin", "trust", "verify", "--json", "--bundle", str(bundle)]
    repo = ["--repo", "trailofbits/rfc8785.py"]
    verified = _on_windows([*args, *repo, str(artifact)], tmp_path, NEXO_HOME=str(home))
    assert verified.code == 0, verified.stderr
    assert verified.document["verified"] is True
    assert verified.document["claims"]["source_repository"] == "trailofbits/rfc8785.py"
    other = tmp_path / artifact.name
    other.write_bytes(artifact.read_bytes() + b"\0")
    refused = _on_windows([*args, *repo, str(other)], tmp_path, NEXO_HOME=str(home))
    assert refused.code == 1, refused.stderr
    assert refused.document["ok"] is False
    assert refused.document["kind"] == "signature_invalid"
    assert not home.exists()


def _readme_windows_rows() -> tuple[set[str], set[str]]:
    """The commands README.md's platform table says run on Windows, and those it refuses."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index("### Which OS runs what")
    table = readme[start : readme.index("\n\n", readme.index("|---", start))]
    runs: set[str] = set()
    refused: set[str] = set()
    for line in table.splitlines():
        if not line.startswith("| `"):
            continue
        row = line.strip("|").split(" | ")
        names = set(re.findall(r"`([a-z]+(?: [a-z]+)?)`", row[0].split("(")[0]))
        (refused if "refused" in row[-1] else runs).update(names)
    return runs, refused


@pytest.mark.parametrize(
    "args",
    [
        ["plugin", "install", "owner/repo"],
        ["plugin", "sync"],
        ["plugin", "lock"],
        ["plugin", "upgrade", "--all"],
        ["plugin", "remove", "demo"],
        ["plugin", "rollback", "demo"],
        ["plugin", "hold", "demo"],
        ["plugin", "unhold", "demo"],
        ["plugin", "enable", "demo"],
        ["plugin", "disable", "demo"],
        ["plugin", "doctor"],
        ["plugin", "install", "--link", "."],
    ],
)
def test_plugin_root_commands_refuse_at_once_on_windows(tmp_path: Path, args: list[str]) -> None:
    home = tmp_path / "home"
    result = _on_windows(args, tmp_path, NEXO_HOME=str(home))
    assert result.code == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "runs on Linux and macOS only" in lines[0]
    # The sentence names what does run there: every command the README's platform table
    # says runs on Windows (a group for all its subcommands), and none it refuses.
    assert lines[0].endswith(" [usage]"), lines[0]
    sentence = lines[0].removesuffix(" [usage]")
    named = set(re.split(r", | and ", sentence.split("; on Windows use ", 1)[1]))
    runs, refused = _readme_windows_rows()
    assert {name.split()[0] for name in runs} == named
    assert not named & {name.split()[0] for name in refused}
    assert not home.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_refusal_on_windows_is_a_json_document_with_json(tmp_path: Path) -> None:
    result = _on_windows(["plugin", "install", "--json", "owner/repo"], tmp_path)
    assert result.code == 2
    assert result.document["kind"] == "usage"


def test_read_only_operator_commands_run_on_windows(tmp_path: Path) -> None:
    """``list``, ``verify``, ``outdated``, ``sbom`` and ``cache dir`` only read: they work
    (nothing is installed here, and nothing is created)."""
    home = tmp_path / "home"
    for args in (["list", "--json"], ["verify", "--json"], ["outdated", "--json"]):
        result = _on_windows(["plugin", *args], tmp_path, NEXO_HOME=str(home))
        assert result.code == 0, result.stderr
        assert result.document["ok"] is True
    inventory = _on_windows(["plugin", "sbom", "--all"], tmp_path, NEXO_HOME=str(home))
    assert inventory.code == 0, inventory.stderr
    assert json.loads(inventory.stdout)["bomFormat"] == "CycloneDX"
    shown = _on_windows(["plugin", "cache", "dir"], tmp_path, NEXO_HOME=str(home))
    assert (shown.code, shown.stdout.strip()) == (0, str(home / "cache" / "blobs"))
    assert not home.exists()


def test_help_of_a_refused_command_still_shows_on_windows(tmp_path: Path) -> None:
    result = _on_windows(["plugin", "install", "--help"], tmp_path)
    assert result.code == 0, result.stderr
    assert "SOURCE" in result.stdout


@pytest.mark.parametrize("encoding", ["cp1252", "ascii"])
@pytest.mark.parametrize("output_format", ["json", "sarif", "text"])
def test_a_report_reaches_a_stream_of_a_legacy_code_page(
    tmp_path: Path, encoding: str, output_format: str
) -> None:
    """Windows gives redirected output its ANSI code page (``cp1252``), which has no ``✓``:
    a report quoting a manifest's non-ASCII key is written whole, as UTF-8, and a JSON or
    SARIF one parses."""
    created = _on_windows(["plugin", "new", "demo", "--lang", "python"], tmp_path)
    assert created.code == 0, created.stderr
    project = tmp_path / "demo"
    manifest = project / "plugin.toml"
    text = manifest.read_text("utf-8")
    manifest.write_bytes(text.replace("[plugin]\n", '[plugin]\n"clé✓" = 1\n', 1).encode())
    before = manifest.read_bytes()
    result = _on_windows(
        ["plugin", "lint", "--format", output_format, "plugin.toml"],
        project,
        PYTHONIOENCODING=encoding,
    )
    assert result.code == 1, result.stderr
    assert "error:" not in result.stderr, result.stderr
    assert "unknown key `clé✓` in table [plugin]" in result.stdout
    if output_format != "text":
        assert "clé✓" in json.dumps(json.loads(result.stdout), ensure_ascii=False)
    assert manifest.read_bytes() == before


def _as_windows_shows_it(root: Path) -> None:
    """The modes Windows's ``stat`` gives a tree (it keeps no permission bits): 0666 for every
    file, 0777 for every directory."""
    for path in [root, *root.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)


def test_verify_on_windows_compares_contents_not_modes(tmp_path: Path) -> None:
    """A root read on Windows verifies by its files' hashes; the modes its ``stat`` invents are
    no change, while an edited file still is."""
    home, root = tmp_path / "home", tmp_path / "root"
    tarball = write_plugin(tmp_path / "dist", "weather", "0.1.0")
    env = clean_env(NEXO_HOME=str(home))
    env.pop(windows_shim.ENV_FLAG, None)  # installed on a daemon host, even under --windows-shim
    installed = nexo(
        "plugin", "install", tarball, "--skip-signature-verify", "--yes", "--dest", root,
        env=env, cwd=tmp_path,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr
    _as_windows_shows_it(root / "weather-0.1.0")
    verified = _on_windows(["plugin", "verify", "--json", "--dest", str(root)], tmp_path)
    assert verified.code == 0, verified.stdout
    [plugin] = verified.document["plugins"]
    assert (plugin["ok"], plugin["mode_changed"], plugin["modified"]) == (True, [], [])
    shown = _on_windows(["plugin", "verify", "--dest", str(root)], tmp_path)
    assert (shown.code, shown.stdout) == (0, "ok       weather 0.1.0\n")
    assert "file modes are not compared" in shown.stderr
    entry = root / "weather-0.1.0" / "bin" / "weather"
    entry.write_bytes(entry.read_bytes() + b"# planted\n")
    edited = _on_windows(["plugin", "verify", "--json", "--dest", str(root)], tmp_path)
    assert edited.code == 1
    [plugin] = edited.document["plugins"]
    assert (plugin["modified"], plugin["mode_changed"]) == (["bin/weather"], [])
