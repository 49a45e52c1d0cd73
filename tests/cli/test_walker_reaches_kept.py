"""NX234: an `extensions.yaml` whose `max_depth` lets the daemon's extension walk reach the
versions `nexo plugin upgrade` keeps under `<root>/.nexo/kept/<name>/tree/`.

The walker prunes only the names of `ignore_dirs` (hidden directories are walked) down to
`max_depth` (`crates/extensions/src/discovery.rs:188-202` at eec3f33), and of two microapps
with one id keeps the first by path (`discovery.rs:312-328`): `.nexo` sorts before every id,
so the daemon would load the kept version. The default `max_depth` (3) stays above it; the
kept manifest is 5 levels below the root. `plugins/discovery.yaml` has no `max_depth` (the
plugin walker's is fixed at 2, `nexo_plugin_registry/discovery.rs:63-64`).
"""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo, stand_in_env
from support.github_server import GitHubServer

plugin = partial(nexo, "plugin", in_process=True)


def _release(project: Path, version: str, env: dict[str, str]) -> dict[str, bytes]:
    """The release assets of the microapp in ``project`` at ``version``, packed for real."""
    for name in ("plugin.toml", "nexo-plugin.toml"):
        manifest = project / name
        text = manifest.read_text(encoding="utf-8")
        manifest.write_text(
            text.replace('version = "0.1.0"', f'version = "{version}"'), encoding="utf-8"
        )
    packed = plugin("pack", "--out", str(project / version), env=env, cwd=project)
    assert packed.code == 0, packed.stderr
    names = [
        f"greeter-{version}-noarch.tar.gz",
        f"greeter-{version}-noarch.tar.gz.sha256",
        "plugin.toml",
    ]
    return {name: (project / version / name).read_bytes() for name in names}


@pytest.fixture
def upgraded(tmp_path: Path, server: GitHubServer) -> tuple[Path, dict[str, str]]:
    """A microapp `greeter` installed from a release at 0.1.0 into `<tmp>/ext`, then upgraded
    to 0.2.0: 0.1.0 is kept under `ext/.nexo/kept` for rollback."""
    env = {**stand_in_env(tmp_path / "nexo", server.url), "HOME": str(tmp_path)}
    created = plugin(
        "new", "greeter", "--kind", "microapp", "--lang", "python", env=env, cwd=tmp_path
    )
    assert created.code == 0, created.stderr
    project, dest = tmp_path / "greeter", tmp_path / "ext"
    server.publish("acme", "greeter", "v0.1.0", _release(project, "0.1.0", env))
    done = plugin("install", "acme/greeter", "--dest", str(dest), "--yes", env=env)
    assert done.code == 0, done.stderr
    server.publish("acme", "greeter", "v0.2.0", _release(project, "0.2.0", env))
    done = plugin("upgrade", "greeter", "--dest", str(dest), "--yes", "--json", env=env)
    assert done.code == 0, done.stdout
    [kept] = json.loads(done.stdout)["kept_paths"]
    assert Path(kept).is_relative_to(dest / ".nexo" / "kept")
    return dest, env


def _config(tmp_path: Path, dest: Path, extra: str) -> Path:
    directory = tmp_path / "config"
    directory.mkdir()
    (directory / "extensions.yaml").write_text(
        f'extensions:\n  search_paths: ["{dest}"]\n{extra}', encoding="utf-8"
    )
    return directory


@pytest.mark.parametrize(
    ("extra", "reached"),
    [
        ("", False),  # the default max_depth, 3
        ("  max_depth: 4\n", False),  # .nexo/kept/<name>/tree: the manifest is one further
        ("  max_depth: 5\n", True),
        ("  max_depth: 9\n", True),
        # `.nexo` pruned by name, as the walker's filter_entry prunes it.
        ("  max_depth: 9\n  ignore_dirs: [target, .git, .nexo]\n", False),
        ("  enabled: false\n  max_depth: 9\n", False),  # no walk at all
    ],
)
def test_lint_and_doctor_warn_when_the_walk_reaches_kept_versions(
    tmp_path: Path, upgraded: tuple[Path, dict[str, str]], extra: str, reached: bool
) -> None:
    dest, env = upgraded
    config = _config(tmp_path, dest, extra)
    linted = plugin("lint", str(config / "extensions.yaml"), "--format", "json", env=env)
    assert linted.code == 0, linted.stdout
    codes = [d["code"] for f in json.loads(linted.stdout)["files"] for d in f["diagnostics"]]
    assert codes.count("NX234") == (1 if reached else 0), linted.stdout

    report = plugin(
        "doctor", "--dest", str(dest), "--config", str(config), "--no-check", "--json", env=env
    )
    assert report.code == 0, report.stdout
    walked = [
        finding
        for finding in json.loads(report.stdout)["findings"]
        if finding["check"] == "discovery" and finding["severity"] == "warning"
    ]
    if reached:
        [finding] = walked
        assert finding["path"] == str(dest / ".nexo")
        # It names the kept 0.1.0 manifest the walk finds now, and the remedy.
        assert os.fspath(dest / ".nexo" / "kept") in finding["message"]
        assert "tree/plugin.toml" in finding["message"]
        assert "max_depth` to 4 or less" in finding["message"]
    else:
        assert walked == []
