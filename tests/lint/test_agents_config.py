"""The keys of each agent in agents.yaml and agents.d/ drop-ins, as the daemon's agent type
takes them.

Source: lordmacu/nexo-rs eec3f33. ``crates/config/src/types/agents.rs:4-8`` (``AgentsConfig``)
and ``:28-367`` (``AgentConfig``): both ``#[serde(deny_unknown_fields)]``, no alias, rename or
flatten; every field ``#[serde(default)]`` but ``id`` (``:31``) and ``model`` (``:38``).
``crates/config/src/lib.rs:65`` (``load_required``) and ``:213`` (``merge_agents_drop_in``)
propagate serde's error: the daemon does not start. The accepted and refused files below are
the daemon's own tests, ``crates/config/tests/load_test.rs``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli import nexo
from support.lint_cli import run_lint_json

from nexo_pkg.lint.daemon_files import AGENT_FIELDS

from .test_microapp_config import MICROAPP, lint_yaml, project

# crates/config/tests/load_test.rs:23-37 (`write_fixtures`, loaded by `happy_path`, :113-118).
KATE = (
    "agents:\n"
    '  - id: "kate"\n'
    "    model:\n"
    '      provider: "minimax"\n'
    '      model: "MiniMax-M2.5"\n'
    "    plugins: [whatsapp]\n"
    "    heartbeat:\n"
    "      enabled: true\n"
    '      interval: "5m"\n'
)
# crates/config/tests/load_test.rs:205-227 (`unknown_field_in_agents_yaml`): refused.
TYPO = (
    "agents:\n"
    '  - id: "kate"\n'
    "    model:\n"
    '      provider: "minimax"\n'
    '      model: "MiniMax-M2.5"\n'
    '    typo_field: "oops"\n'
)
NAMES = ("agents.yaml", "agents.d/10-kate.yaml")


def _diagnostics(tmp_path: Path, name: str, text: str) -> tuple[int, list[dict[str, Any]]]:
    path = tmp_path / "config" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    code, report = run_lint_json([path], cwd=tmp_path)
    [entry] = report["files"]
    return code, entry["diagnostics"]


@pytest.mark.parametrize("name", NAMES)
def test_an_agents_unknown_key_is_an_error_at_the_key(tmp_path: Path, name: str) -> None:
    project(tmp_path, None, companion="")
    code, [diagnostic] = _diagnostics(tmp_path, name, TYPO)
    assert code == 1
    assert diagnostic["code"] == "NX220"
    assert diagnostic["severity"] == "error"
    assert diagnostic["key_path"] == "agents[0].typo_field"
    assert diagnostic["range"] == {
        "start": {"line": 6, "column": 5},
        "end": {"line": 6, "column": 15},
    }
    shown = "this agents.d drop-in" if "agents.d" in name else "agents.yaml"
    assert diagnostic["message"] == (
        f"unknown key `typo_field` in an agent: the daemon refuses {shown} and does not start"
    )


def test_a_misspelt_agent_key_is_named(tmp_path: Path) -> None:
    project(tmp_path, None, companion="")
    text = KATE.replace("    plugins:", "    sytem_prompt: hi\n    plugins:")
    code, [diagnostic] = _diagnostics(tmp_path, "agents.yaml", text)
    assert code == 1
    assert (diagnostic["code"], diagnostic["range"]["start"]) == ("NX220", {"line": 6, "column": 5})
    assert diagnostic["help"] == "did you mean `system_prompt`?"


@pytest.mark.parametrize("name", NAMES)
def test_an_agent_without_its_id_is_an_error(tmp_path: Path, name: str) -> None:
    """`id` has no `#[serde(default)]` (agents.rs:31): "missing field `id`"."""
    project(tmp_path, None, companion="")
    text = KATE + "  - model: {provider: minimax, model: m}\n    plugins: []\n"
    code, [diagnostic] = _diagnostics(tmp_path, name, text)
    assert code == 1
    assert (diagnostic["code"], diagnostic["severity"]) == ("NX221", "error")
    assert diagnostic["key_path"] == "agents[1]"
    assert diagnostic["range"]["start"] == {"line": 10, "column": 5}
    assert diagnostic["message"].startswith("`agents[1].id` is missing: the daemon refuses ")


@pytest.mark.parametrize("name", NAMES)
def test_an_agent_without_its_model_is_an_error(tmp_path: Path, name: str) -> None:
    """`model: ModelConfig` has no `#[serde(default)]` (agents.rs:38): "missing field
    `model`"."""
    project(tmp_path, None, companion="")
    code, [diagnostic] = _diagnostics(tmp_path, name, "agents:\n  - id: ana\n    plugins: []\n")
    assert code == 1
    assert (diagnostic["code"], diagnostic["severity"]) == ("NX221", "error")
    assert diagnostic["key_path"] == "agents[0]"
    assert diagnostic["range"]["start"] == {"line": 2, "column": 5}
    assert diagnostic["message"].startswith("`agents[0].model` is missing: the daemon refuses ")
    assert "model: {provider: ..., model: ...}" in diagnostic["help"]


@pytest.mark.parametrize("name", NAMES)
def test_agents_the_daemon_loads_pass(tmp_path: Path, name: str) -> None:
    """load_test.rs `happy_path` (:113-118) and `defaults_applied` (:264-282, an agent of only
    `id` and `model`) load."""
    project(tmp_path, None, companion="")
    text = KATE + "  - id: ana\n    model: {provider: minimax, model: m}\n"
    assert lint_yaml(tmp_path, name, text) == (0, [])


@pytest.mark.parametrize(
    "name",
    ["agents.d/10-kate.yml", "agents.d/.yaml", "agents.d/10-kate.YAML", "agents.d/10-kate.Yml"],
)
def test_a_drop_in_not_named_yaml_is_said_to_be_skipped(tmp_path: Path, name: str) -> None:
    """`merge_agents_drop_in` (crates/config/src/lib.rs:197-202) keeps the entries whose
    extension is exactly `yaml`: a drop-in named otherwise (and linted by naming it) is a
    warning at 1:1 that the daemon never loads it, and nothing else of a file it would load.
    The comparison is case-sensitive (lib.rs:201, `== Some("yaml")` at eec3f33), so
    `10-kate.YAML` and `10-kate.Yml` are skipped too: read as the YAML they are, not as TOML."""
    project(tmp_path, None, companion="")
    code, [diagnostic] = _diagnostics(tmp_path, name, KATE)
    assert code == 0
    assert (diagnostic["code"], diagnostic["severity"]) == ("NX235", "warning")
    assert diagnostic["range"] == {
        "start": {"line": 1, "column": 1},
        "end": {"line": 1, "column": 1},
    }
    file_name = Path(name).name
    assert diagnostic["message"] == (
        "the daemon skips the files of agents.d/ not named *.yaml: it never loads "
        f"{file_name}, so the agents defined here do not exist for it"
    )
    stem = "NAME" if file_name == ".yaml" else "10-kate"
    assert diagnostic["help"] == f"rename it to end in .yaml (agents.d/{stem}.yaml)"
    # The same agents in a drop-in the daemon reads: nothing to say.
    assert _diagnostics(tmp_path, "agents.d/10-kate.yaml", KATE) == (0, [])


@pytest.mark.parametrize("name", ["agents.d/notes.yml", "agents.d/notes.YML"])
def test_a_yml_drop_in_is_a_drop_in_whatever_it_holds(tmp_path: Path, name: str) -> None:
    """A `.yml` in agents.d is known by where it is, as a `.yaml` one is: one holding no
    `agents:` line yet (comments only) is the drop-in the daemon skips (NX235), not a TOML
    manifest missing its `[plugin]` table (NX010)."""
    project(tmp_path, None, companion="")
    _, diagnostics = _diagnostics(tmp_path, name, "# the agents of the night shift\n")
    codes = {d["code"] for d in diagnostics}
    assert "NX235" in codes
    assert not codes & {"NX001", "NX010"}, diagnostics  # never read as a TOML manifest


# What the daemon would refuse in a drop-in it reads (an unknown agent key, `schema_version`).
REFUSED_IF_READ = KATE + "    bogus: 1\nschema_version: 11\n"


@pytest.mark.parametrize("name", ["agents.d/10-kate.yml", "agents.d/10-kate.YAML"])
def test_a_skipped_drop_in_gets_nx235_only(tmp_path: Path, name: str) -> None:
    """The daemon never reads a drop-in not named `*.yaml` (lib.rs:197-202): findings that say
    it refuses the file's content and does not start (NX220) are not true of it."""
    project(tmp_path, None, companion="")
    code, diagnostics = _diagnostics(tmp_path, name, REFUSED_IF_READ)
    assert code == 0
    assert [(d["code"], d["severity"]) for d in diagnostics] == [("NX235", "warning")]
    # Read by the daemon under its right name, the same content is refused.
    code, diagnostics = _diagnostics(tmp_path, "agents.d/10-kate.yaml", REFUSED_IF_READ)
    assert code == 1
    assert {d["code"] for d in diagnostics} == {"NX220"}


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("README.md", REFUSED_IF_READ.encode()),
        ("10-kate.txt", REFUSED_IF_READ.encode()),
        ("10-kate.yaml~", REFUSED_IF_READ.encode()),
        ("notes", b"# Night shift\n\nAgents = see 10-kate.yaml\n"),
        ("blob.bin", b"\xff\xfe\x00\x01not text"),
    ],
)
def test_any_named_file_the_daemon_skips_in_agents_d_gets_nx235_only(
    tmp_path: Path, name: str, content: bytes
) -> None:
    """Named on the command line (or as --stdin-filename), a file of agents.d the daemon
    skips for its name is that skipped drop-in, whatever it holds: NX235 alone, never read as
    a TOML manifest (NX001/NX010) or a refused drop-in (NX220)."""
    project(tmp_path, None, companion="")
    path = tmp_path / "config" / "agents.d" / name
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    expected = {
        "code": "NX235",
        "severity": "warning",
        "message": "the daemon skips the files of agents.d/ not named *.yaml: it never loads "
        f"{name}, so the agents defined here do not exist for it",
    }
    code, report = run_lint_json([path], cwd=tmp_path)
    [entry] = report["files"]
    assert code == 0
    assert [{key: d[key] for key in expected} for d in entry["diagnostics"]] == [expected]
    relative = f"config/agents.d/{name}"
    result = nexo(
        "plugin",
        "lint",
        "--format",
        "json",
        "--stdin",
        "--stdin-filename",
        relative,
        stdin=content,
        cwd=tmp_path,
        in_process=True,
    )
    [entry] = json.loads(result.stdout)["files"]
    assert result.code == 0
    assert [{key: d[key] for key in expected} for d in entry["diagnostics"]] == [expected]


def test_a_toml_file_in_agents_d_is_still_linted_as_a_manifest(tmp_path: Path) -> None:
    """Only names the daemon skips and lint would not read as TOML become NX235: a manifest
    named explicitly is linted as one wherever it is (SPEC §2)."""
    project(tmp_path, None, companion="")
    path = tmp_path / "config" / "agents.d" / "plugin.toml"
    path.parent.mkdir(parents=True)
    path.write_text('[plugin]\nid = "x"\n', encoding="utf-8")
    code, report = run_lint_json([path], cwd=tmp_path)
    [entry] = report["files"]
    assert code == 1
    assert [d["message"] for d in entry["diagnostics"]] == [
        f"table [plugin] is missing required key `{key}`"
        for key in ("version", "name", "description", "min_nexo_version")
    ]


def test_standard_input_without_a_name_is_linted_as_a_manifest_inside_agents_d(
    tmp_path: Path,
) -> None:
    """`--stdin` without `--stdin-filename` names no file, so not one of agents.d the daemon
    skips, even when run from inside agents.d: the manifest on standard input gets its own
    findings and the run fails, as anywhere else (never NX235 alone and exit 0)."""
    project(tmp_path, None, companion="")
    drop_ins = tmp_path / "config" / "agents.d"
    drop_ins.mkdir()
    manifest = b'[plugin]\nid = "x"\n'
    outside = nexo("plugin", "lint", "--stdin", "--format", "json", stdin=manifest,
                   cwd=tmp_path, in_process=True)  # fmt: skip
    inside = nexo("plugin", "lint", "--stdin", "--format", "json", stdin=manifest,
                  cwd=drop_ins, in_process=True)  # fmt: skip
    [entry] = json.loads(inside.stdout)["files"]
    assert [d["code"] for d in entry["diagnostics"]] == ["NX010"] * 4, entry
    assert (inside.code, inside.stdout) == (outside.code, outside.stdout) == (1, outside.stdout)


def test_lint_config_dir_names_every_drop_in_the_daemon_skips(tmp_path: Path) -> None:
    """`lint --config DIR` lints what the daemon reads of DIR, and says of each file of
    agents.d named as YAML that it skips for its name (an extension of `yml`, or `yaml` in
    another case) that it is skipped: NX235 alone, whatever the file holds. Files no one
    meant as a drop-in (a README, an editor's swap or backup file) are not reported."""
    project(tmp_path, None, companion="")
    drop_ins = tmp_path / "config" / "agents.d"
    drop_ins.mkdir()
    skipped = ["a.yml", "b.YAML", "c.Yml"]
    for name in [*skipped, "README.md", ".e.yaml.swp", "e.yaml~", "d.yaml.bak"]:
        (drop_ins / name).write_text(REFUSED_IF_READ, encoding="utf-8")
    (drop_ins / "e.yaml").write_text(KATE, encoding="utf-8")
    (drop_ins / "f.yml").mkdir()  # not a file: nothing for the daemon to skip or read
    code, report = run_lint_json([], "--config", "config", cwd=tmp_path)
    assert code == 0, report
    found = {
        entry["path"]: [(d["code"], d["severity"]) for d in entry["diagnostics"]]
        for entry in report["files"]
    }
    for name in skipped:
        assert found.pop(f"config/agents.d/{name}") == [("NX235", "warning")], name
    assert found.pop("config/agents.d/e.yaml") == []
    assert all(not diagnostics for diagnostics in found.values()), found
    assert not any("f.yml" in path for path in found)


def test_every_key_of_the_agent_type_is_accepted(tmp_path: Path) -> None:
    """All 48 fields of `AgentConfig` (agents.rs:30-366), each with its default-shaped value."""
    project(tmp_path, None, companion="")
    assert len(AGENT_FIELDS) == 48
    lines = ["agents:", "  - id: ana", "    model: {provider: minimax, model: m}"]
    lines += [f"    {key}: ~" for key in sorted(AGENT_FIELDS - {"id", "model"})]
    code, found = lint_yaml(tmp_path, "agents.yaml", "\n".join(lines) + "\n")
    assert code == 0
    assert [item for item in found if item[2] == "error"] == []


def test_a_config_dir_parses_its_extensions_yaml_once_for_all_its_drop_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every agents file asks for its directory's extensions.yaml (which microapps exist):
    the same bytes are parsed once, not once per drop-in (a large extensions.yaml with many
    drop-ins took minutes). A rewritten file or another environment is read afresh."""
    from nexo_pkg.lint import daemon_files

    config = tmp_path / "config"
    (config / "agents.d").mkdir(parents=True)
    extensions = "extensions:\n  disabled: [a, b, '${H91C_ID:-c}']\n"
    (config / "extensions.yaml").write_text(extensions, encoding="utf-8")
    agent = "agents:\n  - id: {0}\n    model: {{provider: x, model: y}}\n"
    drop_ins = [config / "agents.d" / f"a{index}.yaml" for index in range(5)]
    for index, path in enumerate(drop_ins):
        path.write_text(agent.format(f"a{index}"), encoding="utf-8")
    parsed: list[str] = []
    parse = daemon_files.parse_yaml  # type: ignore[attr-defined]

    def counting(text: str) -> Any:
        parsed.append(text)
        return parse(text)

    monkeypatch.setattr(daemon_files, "parse_yaml", counting)
    monkeypatch.delenv("H91C_ID", raising=False)

    def disabled() -> tuple[str, ...]:
        for path in drop_ins:
            text = path.read_text(encoding="utf-8")
            daemon_files.lint_config_text(text, path=str(path), kind="agents", cwd=tmp_path)
        data = daemon_files._extensions_data(config)
        return daemon_files._extensions_settings(data).disabled

    assert disabled() == ("a", "b", "c")
    assert parsed.count(extensions) == 1
    monkeypatch.setenv("H91C_ID", "d")
    assert disabled() == ("a", "b", "d")
    (config / "extensions.yaml").write_text("extensions:\n  disabled: [e]\n", encoding="utf-8")
    assert disabled() == ("e",)


def test_a_config_dir_reads_each_microapp_manifest_once_for_all_its_drop_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each agents file asks which microapps the daemon discovers: the same manifest bytes are
    judged once, not once per drop-in. A manifest rewritten with other bytes of the same size
    (which a file's times may not tell apart) is judged afresh."""
    from nexo_pkg.lint import daemon_files
    from nexo_pkg.manifest import rules_microapp

    config = tmp_path / "config"
    (config / "agents.d").mkdir(parents=True)
    (config / "extensions.yaml").write_text("extensions:\n  enabled: true\n", encoding="utf-8")
    apps = [tmp_path / "extensions" / name for name in ("app_one", "app_two", "app_six")]
    for app in apps:
        app.mkdir(parents=True)
        text = MICROAPP.replace("agent_creator", app.name)
        (app / "plugin.toml").write_text(text, encoding="utf-8")
    agent = "agents:\n  - id: a{0}\n    model: {{provider: x, model: y}}\n"
    drop_ins = [config / "agents.d" / f"a{index}.yaml" for index in range(4)]
    for index, path in enumerate(drop_ins):
        path.write_text(agent.format(index), encoding="utf-8")
    judged: list[Any] = []
    check = rules_microapp.check_microapp

    def counting(data: Any, *args: Any) -> Any:
        judged.append(data)
        return check(data, *args)

    monkeypatch.setattr(rules_microapp, "check_microapp", counting)
    monkeypatch.setattr(daemon_files, "_loaded", {}, raising=False)

    def discovered() -> list[str]:
        for path in drop_ins:
            text = path.read_text(encoding="utf-8")
            daemon_files.lint_config_text(text, path=str(path), kind="agents", cwd=tmp_path)
        settings = daemon_files._extensions_settings(daemon_files._extensions_data(config))
        return [app.manifest.id for app in daemon_files._discover(settings, tmp_path)]

    assert discovered() == ["app_one", "app_six", "app_two"]
    assert len(judged) == 3
    manifest = apps[2] / "plugin.toml"
    manifest.write_text(MICROAPP.replace("agent_creator", "app_ten"), encoding="utf-8")
    assert discovered() == ["app_one", "app_ten", "app_two"]
    assert len(judged) == 4
