"""``sync`` says when the daemon will never load a plugin it installs, as ``install`` does,
and installs it all the same: the plugin discovery walks only ``discovery.search_paths``
(``crates/core/src/agent/nexo_plugin_registry/discovery.rs:48-67`` at eec3f33), nothing
without ``plugins/discovery.yaml`` (``crates/config/src/lib.rs:280-284``)."""

from __future__ import annotations

from pathlib import Path

from support.cli import nexo
from support.registry import Registry
from support.registry_env import write_wanted

from .conftest import LINUX, MakeDist, push_dist


def _locked_alpha(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> Path:
    """alpha 1.0.0 (unsigned, linux) pushed to ``registry`` and locked in ``tmp_path/project``
    (the directory returned)."""
    push_dist(make_dist("alpha", "1.0.0", identity=None, targets=(LINUX,)),
              registry.ref("plugins/alpha"), Path(fleet_env["NEXO_HOME"]))  # fmt: skip
    project = tmp_path / "project"
    project.mkdir()
    wanted = write_wanted(project / "nexo-plugins.toml", {"alpha": registry.ref("plugins/alpha")})
    locked = nexo("plugin", "lock", "-f", wanted, "--plain-http", env=fleet_env, in_process=True)
    assert locked.code == 0, locked.stderr
    return project


def test_sync_warns_about_a_root_the_daemon_does_not_discover(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    project = _locked_alpha(tmp_path, fleet_env, registry, make_dist)
    root = tmp_path / "root"
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    discovery = config / "plugins" / "discovery.yaml"
    discovery.write_text(f"discovery:\n  search_paths: [{tmp_path / 'other'}]\n")

    def sync(*flags: str | Path) -> tuple[list[str], str]:
        synced = nexo(
            "plugin", "sync", "--lock", project / "nexo-plugins.lock", "--dest", root,
            "--config", config, "--plain-http", "--json", *flags,
            env=fleet_env, in_process=True,
        )  # fmt: skip
        assert synced.code == 0, synced.stderr
        (plugin,) = synced.document["plugins"]
        assert isinstance(plugin, dict)
        assert (root / "alpha-1.0.0").is_dir()  # installed all the same
        return [str(each) for each in plugin.get("warnings", [])], synced.stderr

    warnings, stderr = sync()
    [warning] = [each for each in warnings if "the daemon will not load alpha" in each]
    assert f"from {root}: it is not one of the search paths of {discovery}" in warning
    assert f"warning: alpha: {warning}" in stderr  # said on stderr, as without --json

    discovery.write_text(f"discovery:\n  search_paths: [{root}]\n")
    (root / "alpha-1.0.0" / ".nexo-install.json").unlink()  # installed again
    warnings, _ = sync()
    assert warnings  # installed again (its signature is still warned about)
    assert [each for each in warnings if "will not load" in each] == []


def test_sync_into_a_root_no_daemon_reads_notes_it_as_install_does(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """No daemon configured (no discovery.yaml anywhere), no --dest: sync installs into the
    fallback root ``$NEXO_HOME/state/plugins``, and says, as install's `note:` does, that the
    daemon will not load it: on stderr, and in its --json outcome (``notes``), never
    silently; not a warning, as for install."""
    home = Path(fleet_env["NEXO_HOME"])
    project = _locked_alpha(tmp_path, fleet_env, registry, make_dist)
    lock = project / "nexo-plugins.lock"
    root = home / "state" / "plugins"
    as_json = nexo(
        "plugin", "sync", "--lock", lock, "--plain-http", "--json",
        env=fleet_env, cwd=project, in_process=True,
    )  # fmt: skip
    assert as_json.code == 0, as_json.stderr
    (plugin,) = as_json.document["plugins"]
    [said] = plugin["notes"]
    assert said.startswith(f"the daemon will not load alpha from {root}: ")
    assert "scans no directory" in said
    assert [each for each in plugin.get("warnings", []) if "will not load" in each] == []
    (root / "alpha-1.0.0" / ".nexo-install.json").unlink()  # installed again
    text = nexo(
        "plugin", "sync", "--lock", lock, "--plain-http",
        env=fleet_env, cwd=project, in_process=True,
    )  # fmt: skip
    assert text.code == 0, text.stderr
    [line] = [each for each in text.stderr.splitlines() if "will not load" in each]
    assert line.startswith(f"note: the daemon will not load alpha from {root}: ")
    assert (root / "alpha-1.0.0").is_dir()
