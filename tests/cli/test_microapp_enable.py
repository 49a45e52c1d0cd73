"""`nexo plugin enable|disable|doctor` of an installed microapp act on `extensions.yaml`.

A microapp is discovered by the daemon's extension host, which applies `extensions.yaml`'s
`enabled`, `disabled` and `allowlist` (`src/main.rs:6530-6543` at eec3f33, the lists in
`crates/extensions/src/discovery.rs:329-360`) and never reads `plugins/discovery.yaml`. The
daemon's own `agent ext enable/disable` edits `extensions.disabled`
(`crates/extensions/src/cli/commands.rs:144-180`, `cli/yaml_edit.rs`): so do these, keeping
the file's comments, layout and line endings.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.microapps import install_scaffolded_microapp

plugin = partial(nexo, "plugin", in_process=True)

DISCOVERY = b"discovery:\n  disabled: [legacy]  # the plugin discovery's own list\n"
EXTENSIONS = (
    b"# Microapps of the production host.\r\n"
    b"extensions:\r\n"
    b"  disabled:\r\n"
    b"    - other   # broken since 0.3\r\n"
    b"  max_depth: 3\r\n"
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scaffolded microapp `greeter`, packed and installed into `<tmp>/ext`."""
    return install_scaffolded_microapp(tmp_path_factory.mktemp("microapp-enable"))


@pytest.fixture
def config(tmp_path: Path) -> Path:
    directory = tmp_path / "config"
    (directory / "plugins").mkdir(parents=True)
    (directory / "plugins" / "discovery.yaml").write_bytes(DISCOVERY)
    return directory


def _run(*args: str | Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """`nexo plugin ARGS --json` through the real command line (a process of its own)."""
    result = nexo("plugin", *args, "--json", env=env or clean_env())
    document = json.loads(result.stdout)
    assert isinstance(document, dict)
    document["exit"] = result.code
    return document


def test_disable_then_enable_edit_extensions_yaml(installed: Path, config: Path) -> None:
    extensions = config / "extensions.yaml"
    extensions.write_bytes(EXTENSIONS)
    common = ("greeter", "--dest", installed, "--config", config)

    done = _run("disable", *common)
    # The install root is outside the extension host's walk (./extensions of the working
    # directory): said as install says it (tests/cli/test_install_reach.py).
    unreached = done.pop("warnings")
    assert isinstance(unreached, list)
    assert len(unreached) == 1
    assert unreached[0].startswith(f"the daemon will not load microapp greeter from {installed}")
    assert done == {
        "ok": True, "id": "greeter", "state": "disabled", "changed": True,
        "added_to_allowlist": False, "microapp": True, "path": str(extensions), "exit": 0,
    }  # fmt: skip
    # One line added to the list the extension host reads, in the file's CRLF; every other
    # byte kept, comments included. The plugin discovery's file is not touched.
    assert extensions.read_bytes() == EXTENSIONS.replace(
        b"# broken since 0.3\r\n", b"# broken since 0.3\r\n    - greeter\r\n"
    )
    assert (config / "plugins" / "discovery.yaml").read_bytes() == DISCOVERY
    assert not (config / "extensions.yaml.lock").exists()
    listed = plugin("list", "--dest", str(installed), "--config", str(config), "--json")
    assert json.loads(listed.stdout)["plugins"][0]["discovery"] == "disabled"

    again = _run("disable", *common)
    assert (again["changed"], again["exit"]) == (False, 0)

    done = _run("enable", *common)
    assert (done["state"], done["changed"], done["exit"]) == ("enabled", True, 0)
    assert extensions.read_bytes() == EXTENSIONS
    assert (config / "plugins" / "discovery.yaml").read_bytes() == DISCOVERY


def test_enable_adds_the_microapp_to_an_extensions_allowlist(installed: Path, config: Path) -> None:
    extensions = config / "extensions.yaml"
    extensions.write_text("extensions:\n  allowlist: [other]  # only these\n", encoding="utf-8")
    done = plugin("enable", "greeter", "--dest", str(installed), "--config", str(config))
    assert done.code == 0, done.stderr
    assert "added to extensions.allowlist" in done.stderr
    assert extensions.read_text(encoding="utf-8") == (
        "extensions:\n  allowlist: [other, greeter]  # only these\n"
    )
    assert (config / "plugins" / "discovery.yaml").read_bytes() == DISCOVERY


def test_disable_creates_extensions_yaml_when_missing(installed: Path, config: Path) -> None:
    done = plugin("disable", "greeter", "--dest", str(installed), "--config", str(config))
    assert done.code == 0, done.stderr
    assert (config / "extensions.yaml").read_text(encoding="utf-8") == (
        "extensions:\n  disabled: [greeter]\n"
    )
    assert (config / "plugins" / "discovery.yaml").read_bytes() == DISCOVERY


@pytest.mark.parametrize(
    ("command", "text", "environ", "said"),
    [
        # The daemon substitutes `${OFF}` before it reads the list: unset here, the ids it
        # reads are not known.
        ("disable", 'extensions:\n  disabled: ["${OFF}"]\n', {}, "OFF not set"),
        # Set here to the id itself: the edit cannot take it out of the list.
        ("enable", 'extensions:\n  disabled: ["${OFF}"]\n', {"OFF": "greeter"}, "by hand"),
        # The extension host is off: enabling one microapp would turn every one on.
        ("enable", "extensions:\n  enabled: false\n", {}, "extensions.enabled: false"),
        # A key the daemon refuses: it does not start; the file is not edited.
        ("disable", "extensions:\n  entries:\n    greeter: {enabled: true}\n", {}, "cannot load"),
    ],
)
def test_refusals_leave_extensions_yaml_alone(
    installed: Path,
    config: Path,
    *,
    command: str,
    text: str,
    environ: dict[str, str],
    said: str,
) -> None:
    extensions = config / "extensions.yaml"
    extensions.write_text(text, encoding="utf-8")
    before = sorted(path.name for path in config.rglob("*"))
    refused = plugin(
        command, "greeter", "--dest", str(installed), "--config", str(config), "--json",
        env={**clean_env(), **environ},
    )  # fmt: skip
    assert refused.code == 2, refused.stdout
    document = json.loads(refused.stdout)
    assert (document["ok"], document["kind"]) == (False, "config")
    assert said in document["error"]
    assert extensions.read_text(encoding="utf-8") == text
    assert (config / "plugins" / "discovery.yaml").read_bytes() == DISCOVERY
    assert sorted(path.name for path in config.rglob("*")) == before


def test_enable_with_the_extension_host_off_still_lets_disable_list_it(
    installed: Path, config: Path
) -> None:
    extensions = config / "extensions.yaml"
    extensions.write_text("extensions:\n  enabled: false\n", encoding="utf-8")
    done = plugin("disable", "greeter", "--dest", str(installed), "--config", str(config))
    assert done.code == 0, done.stderr
    # Listed, so it stays off when the extension host is turned back on.
    assert extensions.read_text(encoding="utf-8") == (
        "extensions:\n  enabled: false\n  disabled: [greeter]\n"
    )


@pytest.mark.parametrize(
    ("discovery", "extensions", "note"),
    [
        (DISCOVERY.replace(b"legacy", b"greeter"), None, None),
        (DISCOVERY, b"extensions:\n  disabled: [greeter]\n", "extensions.disabled"),
        (DISCOVERY, b"extensions:\n  allowlist: [other]\n", "not in extensions.allowlist"),
        (DISCOVERY, b"extensions:\n  enabled: false\n", "extensions.enabled is false"),
    ],
)
def test_doctor_states_a_microapps_discovery_from_extensions_yaml(
    installed: Path, config: Path, discovery: bytes, extensions: bytes | None, note: str | None
) -> None:
    (config / "plugins" / "discovery.yaml").write_bytes(discovery)
    if extensions is not None:
        (config / "extensions.yaml").write_bytes(extensions)
    report = plugin(
        "doctor", "--dest", str(installed), "--config", str(config), "--no-check", "--json"
    )
    assert report.code == 0, report.stdout
    # The lists' notes (the root itself is outside the extension host's walk: a warning of
    # its own, tests/cli/test_install_reach.py).
    found = [
        finding["message"]
        for finding in json.loads(report.stdout)["findings"]
        if finding["check"] == "discovery" and finding["severity"] == "note"
    ]
    if note is None:
        # discovery.yaml disables no microapp: the extension host never reads it.
        assert found == []
    else:
        [message] = found
        assert message.startswith(note)
        assert "extensions.yaml" in message
