"""`nexo plugin list` on a host without microapp configuration loads neither lint's reader of
the daemon's YAML nor any plugin's manifest: only a host whose `extensions.yaml` exists pays
for reading it, and a plugin's manifest is read only when `discovery.yaml` and
`extensions.yaml` would state it differently (issue-scale `list` of 1,000 plugins stays
within its fixed budget; docs/benchmarks.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import write_plugin

# The modules loaded when the process ends, and the files it opened, written to the path in
# argv[1].
_PROBE = """
import atexit, sys
from nexo_pkg.cli.main import main

opened = []

def watch(event, args):
    if event == "open" and isinstance(args[0], str):
        opened.append(args[0])

def report(path=sys.argv[1]):
    with open(path, "w") as out:
        out.write("\\n".join([*sorted(sys.modules), *opened]))

atexit.register(report)
sys.addaudithook(watch)
sys.argv = ["nexo", *sys.argv[2:]]
main()
"""


def _listed(tmp_path: Path, env: dict[str, str], root: Path, *options: str) -> tuple[set[str], str]:
    modules = tmp_path / "modules.txt"
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            str(modules),
            "plugin",
            "list",
            "--dest",
            str(root),
            *options,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 0, completed.stderr
    return set(modules.read_text().split()), completed.stdout


@pytest.mark.parametrize("extensions_yaml", [False, True], ids=["no-file", "file"])
def test_list_reads_the_daemon_s_yaml_only_when_there_is_some(
    tmp_path: Path, extensions_yaml: bool
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "plugins"
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    assert nexo("plugin", "install", tarball, "--dest", root, "--yes", env=env).code == 0
    config = tmp_path / "home" / "config"
    if extensions_yaml:
        config.mkdir(parents=True, exist_ok=True)
        (config / "extensions.yaml").write_text("extensions:\n  disabled: [other]\n")
    loaded, listing = _listed(tmp_path, env, root)
    assert "enabled" in listing.split()
    # A plain plugin is stated the same by both files' lists: its manifest is never read.
    assert not [name for name in loaded if name.endswith((".toml", ".yaml")) and "hello" in name]
    assert ("nexo_pkg.lint.daemon_files" in loaded) is extensions_yaml


@pytest.mark.parametrize("options", [(), ("--json",)], ids=["text", "json"])
def test_list_loads_no_remedy_it_never_prints(tmp_path: Path, options: tuple[str, ...]) -> None:
    # The commands a refusal prints as its remedy (and shlex, which quotes them) are for
    # refusals: listing a root that verifies loads neither.
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "plugins"
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    assert nexo("plugin", "install", tarball, "--dest", root, "--yes", env=env).code == 0
    loaded, listing = _listed(tmp_path, env, root, *options)
    assert "hello" in listing
    assert sorted({"nexo_pkg.install.remedy", "shlex"} & loaded) == []


@pytest.mark.parametrize("extensions_yaml", [False, True], ids=["no-file", "file"])
def test_doctor_reads_the_daemon_s_yaml_only_when_there_is_some(
    tmp_path: Path, extensions_yaml: bool
) -> None:
    # `doctor` asks whether extensions.yaml's max_depth reaches the versions upgrade keeps:
    # a question only a host with that file has (issue 42: doctor --no-check of 1,000).
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "plugins"
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    assert nexo("plugin", "install", tarball, "--dest", root, "--yes", env=env).code == 0
    if extensions_yaml:
        config = tmp_path / "home" / "config"
        config.mkdir(parents=True, exist_ok=True)
        (config / "extensions.yaml").write_text("extensions:\n  max_depth: 3\n")
    modules = tmp_path / "modules.txt"
    arguments = ["plugin", "doctor", "--no-check", "--dest", str(root)]
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE, str(modules), *arguments],
        env=env, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr
    loaded = set(modules.read_text().split())
    assert ("nexo_pkg.lint.daemon_files" in loaded) is extensions_yaml
