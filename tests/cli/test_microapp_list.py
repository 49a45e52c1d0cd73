"""`nexo plugin list` states an installed microapp as the daemon's extension host decides it.

A microapp is discovered by the extension host, which applies `extensions.yaml`'s
`enabled`, `disabled` and `allowlist` (`src/main.rs:6530-6543` at eec3f33, the lists in
`crates/extensions/src/discovery.rs:329-360`) and never reads `plugins/discovery.yaml`, the
plugin discovery's lists. No `extensions.yaml`: every microapp loads (`src/main.rs:6530`).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.microapps import install_scaffolded_microapp

plugin = partial(nexo, "plugin", in_process=True)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scaffolded microapp `greeter`, packed and installed into `<tmp>/ext`."""
    return install_scaffolded_microapp(tmp_path_factory.mktemp("microapp-list"))


@pytest.mark.parametrize(
    ("extensions", "expected"),
    [
        (None, "enabled"),
        ("extensions:\n  disabled: [greeter]\n", "disabled"),
        ("extensions:\n  allowlist: [other]\n", "not-allowlisted"),
        ("extensions:\n  allowlist: [greeter]\n", "enabled"),
        ("extensions:\n  enabled: false\n", "disabled"),
    ],
)
def test_a_microapps_state_follows_extensions_yaml(
    installed: Path, tmp_path: Path, extensions: str | None, expected: str
) -> None:
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    # The plugin discovery's lists name the microapp: the extension host never reads them.
    (config / "plugins" / "discovery.yaml").write_text(
        "discovery:\n  disabled: [greeter]\n", encoding="utf-8"
    )
    if extensions is not None:
        (config / "extensions.yaml").write_text(extensions, encoding="utf-8")
    before = sorted(path.name for path in config.rglob("*"))
    listed = plugin("list", "--dest", str(installed), "--config", str(config), "--json")
    assert listed.code == 0, listed.stderr
    [entry] = json.loads(listed.stdout)["plugins"]
    assert (entry["id"], entry["discovery"]) == ("greeter", expected)
    rows = plugin("list", "--dest", str(installed), "--config", str(config))
    [row] = rows.stdout.splitlines()
    assert row.split()[-2] == expected  # the state, before the path
    assert sorted(path.name for path in config.rglob("*")) == before  # list only reads
