"""What `nexo plugin install` shows of a microapp: the capabilities its `plugin.toml` declares.

A microapp declares what it provides in the extension manifest's `[capabilities]` table
(`tools`, `hooks`, `channels`, `providers`, `pollers`: `crates/extensions/src/manifest.rs`
`Capabilities` at eec3f33), not in a plugin's `[plugin.capabilities] provides`. The install
screen and `--json` name them (SPEC §5 step 8, "what the manifest asks for") rather than
saying the microapp declares none.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

from support.cli import nexo

plugin = partial(nexo, "plugin", in_process=True)


def test_the_install_screen_names_a_microapps_capabilities(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "NEXO_HOME": str(tmp_path / "nexo")}
    created = plugin(
        "new", "greeter", "--kind", "microapp", "--lang", "python", env=env, cwd=tmp_path
    )
    assert created.code == 0, created.stderr
    manifest = tmp_path / "greeter" / "plugin.toml"
    text = manifest.read_text(encoding="utf-8")
    assert 'tools = ["greeter_hello"]\n' in text
    manifest.write_text(
        text.replace('tools = ["greeter_hello"]\n', 'tools = ["greeter_hello", "greeter_bye"]\n'),
        encoding="utf-8",
        newline="\n",
    )
    packed = plugin("pack", env=env, cwd=tmp_path / "greeter")
    assert packed.code == 0, packed.stderr
    [tarball] = (tmp_path / "greeter" / "dist").glob("*.tar.gz")
    dest = tmp_path / "ext"
    args = ("install", str(tarball), "--dest", str(dest), "--yes", "--dry-run")

    screen = plugin(*args, env=env, cwd=tmp_path)
    assert screen.code == 0, screen.stderr
    (line,) = [line for line in screen.stderr.splitlines() if line.startswith("Capabilities:")]
    assert line == "Capabilities: greeter_hello (tool), greeter_bye (tool)"

    document = plugin(*args, "--json", env=env, cwd=tmp_path).document
    assert document["manifest"]["capabilities"] == ["greeter_hello (tool)", "greeter_bye (tool)"]
    assert not dest.exists() or not any(dest.iterdir())
