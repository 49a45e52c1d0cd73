"""``nexo plugin enable|disable`` edit ``plugins/discovery.yaml`` as the daemon reads it
(``crates/config/src/types/plugins.rs``: ``PluginDiscoveryConfig.disabled``/``allowlist``),
keeping every other byte of the file, and ``list`` shows the state."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
import yaml
from support.cli import nexo
from support.tarballs import write_plugin

DISCOVERY = """\
# Plugin discovery for the production host.
discovery:
  # Installed plugins live here; keep the path absolute.
  search_paths:
    - "{root}"   # the one root
  disabled:
    - legacy_thing  # broken since 0.3
  follow_symlinks: false
"""

# `nexo plugin ...` in this process: these runs need no process of their own.
plugin = partial(nexo, "plugin", in_process=True)


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("NEXO_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    directory = tmp_path / "etc-nexo"
    (directory / "plugins").mkdir(parents=True)
    root = tmp_path / "plugins"
    (directory / "plugins" / "discovery.yaml").write_text(DISCOVERY.format(root=root))
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    result = plugin("install", str(tarball), "--yes", "--config", str(directory))
    assert result.code == 0, result.stderr
    assert (root / "hello-1.0.0").is_dir()
    return directory


def _file(config: Path) -> Path:
    return config / "plugins" / "discovery.yaml"


def _loaded(config: Path) -> dict[str, object]:
    document = yaml.safe_load(_file(config).read_text())
    assert isinstance(document, dict)
    section = document["discovery"]
    assert isinstance(section, dict)
    return section


def _listed_state(config: Path) -> object:
    result = plugin("list", "--json", "--config", str(config))
    assert result.code == 0
    (listed,) = json.loads(result.stdout)["plugins"]
    return listed["discovery"]


def test_disable_then_enable_keeps_the_rest_of_the_file(config: Path) -> None:
    original = _file(config).read_text()
    assert _listed_state(config) == "enabled"

    result = plugin("disable", "hello", "--config", str(config), "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["changed"] is True
    edited = _file(config).read_text()
    assert _loaded(config)["disabled"] == ["legacy_thing", "hello"]
    # Every line of the original is still there, in order, comments included.
    added = [line for line in edited.splitlines() if line not in original.splitlines()]
    assert added == ["    - hello"], added
    assert _listed_state(config) == "disabled"
    result = plugin("list", "--config", str(config))
    assert "disabled" in result.stdout

    result = plugin("disable", "hello", "--config", str(config), "--json")
    assert result.code == 0
    assert json.loads(result.stdout)["changed"] is False
    assert _file(config).read_text() == edited

    result = plugin("enable", "hello", "--config", str(config))
    assert result.code == 0, result.stderr
    assert "enabled" in result.stderr
    assert _file(config).read_text() == original
    assert _listed_state(config) == "enabled"


def test_enable_adds_to_an_allowlist_in_force(config: Path) -> None:
    text = (
        _file(config)
        .read_text()
        .replace("  follow_symlinks: false\n", "  follow_symlinks: false\n  allowlist: [other]\n")
    )
    _file(config).write_text(text)
    assert _listed_state(config) == "not-allowlisted"
    result = plugin("enable", "hello", "--config", str(config), "--json")
    assert result.code == 0
    assert json.loads(result.stdout)["added_to_allowlist"] is True
    assert _loaded(config)["allowlist"] == ["other", "hello"]
    assert _listed_state(config) == "enabled"


def test_disable_creates_the_file_when_missing(tmp_path: Path, config: Path) -> None:
    _file(config).unlink()
    tarball = write_plugin(tmp_path / "dist2", "world", "1.0.0")
    assert plugin("install", str(tarball), "--yes", "--config", str(config)).code == 0
    result = plugin("disable", "world", "--config", str(config))
    assert result.code == 0, result.stderr
    assert _loaded(config)["disabled"] == ["world"]


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["disable", "ghost"], 1, "not_installed"),
        (["enable", "Bad-Id"], 2, "usage"),
        (["disable", "../x"], 2, "usage"),
    ],
)
def test_refusals_leave_the_file_alone(config: Path, args: list[str], code: int, kind: str) -> None:
    before = _file(config).read_bytes()
    result = plugin(*args, "--config", str(config), "--json")
    assert result.code == code
    assert json.loads(result.stdout)["kind"] == kind
    assert "Traceback" not in result.stderr
    assert _file(config).read_bytes() == before
    assert sorted(p.name for p in _file(config).parent.iterdir()) == ["discovery.yaml"]


def test_a_file_the_daemon_cannot_load_is_not_edited(config: Path) -> None:
    _file(config).write_text("discovery: [not, a, mapping\n")
    before = _file(config).read_bytes()
    result = plugin("disable", "hello", "--config", str(config), "--json", "--dest", "x")
    assert result.code == 2
    assert json.loads(result.stdout)["kind"] == "config"
    assert _file(config).read_bytes() == before
    assert sorted(p.name for p in _file(config).parent.iterdir()) == ["discovery.yaml"]


def test_enable_of_an_id_only_listed_cleans_the_list(config: Path) -> None:
    result = plugin("enable", "legacy_thing", "--config", str(config))
    assert result.code == 0, result.stderr
    assert _loaded(config)["disabled"] == []


def test_flow_lists_are_edited_in_place(config: Path) -> None:
    text = (
        _file(config)
        .read_text()
        .replace(
            "  disabled:\n    - legacy_thing  # broken since 0.3\n",
            '  disabled: [legacy_thing, "yes"]  # two\n',
        )
    )
    _file(config).write_text(text)
    assert plugin("disable", "hello", "--config", str(config)).code == 0
    assert '  disabled: [legacy_thing, "yes", hello]  # two\n' in _file(config).read_text()
    assert plugin("enable", "hello", "--config", str(config)).code == 0
    assert _file(config).read_text() == text


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("discovery: {}\n", "discovery: {disabled: [hello]}\n"),
        (
            'discovery: {search_paths: ["{root}"]}  # one root\n',
            'discovery: {search_paths: ["{root}"], disabled: [hello]}  # one root\n',
        ),
    ],
)
def test_a_flow_mapping_gets_the_list_in_place(config: Path, before: str, after: str) -> None:
    """``discovery: {}`` (as a tool writes it) loads in the daemon: disabling a plugin adds
    the list inside the braces instead of refusing the layout."""
    root = config.parent / "plugins"
    _file(config).write_text(before.replace("{root}", str(root)))
    result = plugin("disable", "hello", "--config", str(config), "--dest", str(root), "--json")
    assert result.code == 0, result.stdout
    assert _file(config).read_text() == after.replace("{root}", str(root))
    assert plugin("enable", "hello", "--config", str(config), "--dest", str(root)).code == 0
    assert _loaded(config)["disabled"] == []


@pytest.mark.parametrize(
    "text",
    [
        "discovery:\r\n  search_paths:\r\n    - {root}\r\n  disabled:\r\n    - other\r\n",
        "discovery:\r\n  search_paths: [{root}]\r\n",
        "discovery: ~\r\n",
    ],
)
def test_a_file_with_crlf_line_endings_keeps_them(config: Path, text: str) -> None:
    """The lines an edit adds end as the file's lines do: no lone LF in a CRLF file."""
    root = config.parent / "plugins"
    before = text.replace("{root}", str(root)).encode()
    _file(config).write_bytes(before)
    result = plugin("disable", "hello", "--config", str(config), "--dest", str(root))
    assert result.code == 0, result.stderr
    edited = _file(config).read_bytes()
    assert b"hello" in edited
    assert edited.count(b"\n") == edited.count(b"\r\n"), edited


@pytest.mark.parametrize(
    "search_paths",
    ["[${PLUGIN_ROOT}]", "[${PLUGIN_ROOT:-/srv/nexo/plugins}, ${NEXO_HOME}/more]"],
)
def test_placeholders_in_a_flow_list_are_kept_as_written(
    config: Path, monkeypatch: pytest.MonkeyPatch, search_paths: str
) -> None:
    """The daemon substitutes ``${VAR}`` in the raw text before it parses the file
    (``resolve_placeholders`` in its ``crates/config/src/env.rs``), so ``[${PLUGIN_ROOT}]``
    loads though it is no YAML as written: the edit touches only the list it changes and
    leaves the placeholders as they are."""
    root = config.parent / "plugins"
    monkeypatch.setenv("PLUGIN_ROOT", str(root))
    before = f"discovery:\n  search_paths: {search_paths}  # from the environment\n"
    _file(config).write_text(before)
    result = plugin("disable", "hello", "--config", str(config), "--json")
    assert result.code == 0, result.stdout
    assert _file(config).read_text() == f"{before}  disabled: [hello]\n"
    assert _listed_state(config) == "disabled"
    result = plugin("enable", "hello", "--config", str(config), "--json")
    assert result.code == 0, result.stdout
    assert _file(config).read_text() == f"{before}  disabled: []\n"


def _console(command: str, config: Path) -> tuple[int, dict[str, object], str]:
    """``nexo plugin COMMAND hello --json`` through the installed console script, the plugin
    installed under ``<tmp>/plugins``."""
    root = config.parent / "plugins"
    result = nexo("plugin", command, "hello", "--config", config, "--dest", root, "--json")
    return result.code, json.loads(result.stdout), result.stderr


FLOW_WITH_COMMENTS = (
    "discovery:\n"
    "  disabled: [\n"
    "    legacy_thing,  # broken since 0.3\n"
    "    hello,  # until the fix\n"
    "    other,  # ask ops first\n"
    "  ]\n"
    "  search_paths: [{root}]\n"
)


def test_enable_keeps_the_other_items_of_a_flow_list_as_written(config: Path) -> None:
    """Taking an id out of a flow list over several lines keeps the other items' comments
    and the list's layout: only the id's own line goes."""
    text = FLOW_WITH_COMMENTS.format(root=config.parent / "plugins")
    _file(config).write_text(text)
    code, document, stderr = _console("enable", config)
    assert code == 0, (document, stderr)
    assert _file(config).read_text() == text.replace("    hello,  # until the fix\n", "")
    assert _loaded(config)["disabled"] == ["legacy_thing", "other"]


@pytest.mark.parametrize(
    ("text", "command"),
    [
        # The alias in `disabled` is the allowlist's node: its text is elsewhere.
        ("discovery:\n  allowlist:\n    - &h hello\n    - x\n  disabled:\n    - *h\n", "enable"),
        ("discovery:\n  allowlist: [&h hello, x]\n  disabled: [*h]\n", "enable"),
        ("discovery:\n  allowlist:\n    - &l x\n  disabled:\n    - a\n    - *l\n", "disable"),
    ],
)
def test_an_aliased_item_is_refused_cleanly(config: Path, text: str, command: str) -> None:
    """An item written ``*name`` stands for a node written elsewhere: the edit refuses as
    ``config`` with the file unchanged (it raised ValueError, or rewrote the other list)."""
    _file(config).write_text(text)
    before = _file(config).read_bytes()
    code, document, stderr = _console(command, config)
    assert (code, document["kind"]) == (2, "config"), stderr
    assert "alias" in str(document["error"])
    assert "Traceback" not in stderr
    assert _file(config).read_bytes() == before
    assert sorted(p.name for p in _file(config).parent.iterdir()) == ["discovery.yaml"]


def test_an_alias_kept_in_a_flow_list_stays_an_alias(config: Path) -> None:
    text = "discovery:\n  disabled: [&a legacy_thing, hello, *a]\n"
    _file(config).write_text(text)
    assert _console("enable", config)[0] == 0
    assert _file(config).read_text() == "discovery:\n  disabled: [&a legacy_thing, *a]\n"


def test_an_edit_that_would_change_another_key_is_refused(config: Path) -> None:
    """``disabled: *p`` is the node of ``search_paths``: appending to it would add the id to
    the paths the daemon searches too. The whole reading of the file is compared, not only
    the two lists."""
    text = "discovery:\n  search_paths: &p [/srv/plugins]\n  disabled: *p\n"
    _file(config).write_text(text)
    code, document, _ = _console("disable", config)
    assert (code, document["kind"]) == (2, "config")
    assert _file(config).read_text() == text


@pytest.mark.parametrize(
    "text",
    [
        "discovery:\r  disabled:\r    - other\r",
        "discovery:\r  search_paths: [{root}]\r",
        "discovery:\r  disabled: []  # none yet\r# the host's discovery",
    ],
)
def test_a_file_with_lone_cr_line_ends_keeps_them(config: Path, text: str) -> None:
    """YAML reads a lone CR as a line break: the lines an edit adds end so too (a block list
    was refused as `does not stand on a line of its own`, an added key ended LF)."""
    root = config.parent / "plugins"
    _file(config).write_bytes(text.replace("{root}", str(root)).encode())
    code, document, stderr = _console("disable", config)
    assert code == 0, (document, stderr)
    edited = _file(config).read_bytes()
    assert b"hello" in edited
    assert b"\n" not in edited, edited
