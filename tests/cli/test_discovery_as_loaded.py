"""``plugins/discovery.yaml`` read as the daemon loads it, for the install root, ``list`` and
``enable``/``disable``.

The daemon's config crate parses the file into a ``serde_yaml::Value`` (YAML 1.2) and
deserialises ``PluginDiscoveryConfigFile`` from it (``crates/config/src/lib.rs``,
``load_optional`` and ``deserialize_yaml_with_schema_version``). From a ``Value`` a null reads
as an empty list or an empty struct (serde_yaml 0.9.34 ``src/value/de.rs``: ``Value::Null =>
visit_sequence(Sequence::new())`` / ``visit_mapping(Mapping::new())``), so ``disabled:`` and
``discovery: ~`` load; ``yes``/``on`` are strings (plugin ids such as ``on`` stay ids); a key
given twice refuses the whole file. Its discovery walker then canonicalises each search path
(``crates/core/src/agent/nexo_plugin_registry/discovery.rs``): an empty one names no directory
and is skipped, so nothing may be installed into the working directory in its name.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import write_plugin

plugin = partial(nexo, "plugin", in_process=True)


def _config(tmp_path: Path, text: str) -> Path:
    directory = tmp_path / "etc-nexo"
    (directory / "plugins").mkdir(parents=True, exist_ok=True)
    (directory / "plugins" / "discovery.yaml").write_text(text)
    return directory


def _env(tmp_path: Path) -> dict[str, str]:
    return clean_env(NEXO_HOME=str(tmp_path / "home"))


@pytest.mark.parametrize(
    "text",
    [
        "discovery:\n",
        "discovery: ~\n",
        "discovery: null  # filled in later\n",
        "discovery:\n  search_paths:\n  disabled: ~\n  allowlist: null\n",
        "schema_version: 1\ndiscovery:\n  search_paths: ~\n",
    ],
)
def test_null_lists_and_sections_load_as_empty(tmp_path: Path, text: str) -> None:
    config = _config(tmp_path, text)
    listed = plugin("list", "--json", "--config", config, env=_env(tmp_path), cwd=tmp_path)
    assert listed.code == 0, listed.stdout + listed.stderr
    assert listed.document["dest"] == str(tmp_path / "home" / "state" / "plugins")
    assert "warning" not in listed.stderr
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = plugin(
        "install", tarball, "--yes", "--json", "--config", config, env=_env(tmp_path)
    )
    assert installed.code == 0, installed.stdout
    assert installed.document["path"] == str(
        tmp_path / "home" / "state" / "plugins" / "hello-1.0.0"
    )
    disabled = plugin("disable", "hello", "--json", "--config", config, env=_env(tmp_path))
    assert (disabled.code, disabled.document["state"]) == (0, "disabled"), disabled.stdout
    listed = plugin("list", "--json", "--config", config, env=_env(tmp_path))
    assert [p["discovery"] for p in listed.document["plugins"]] == ["disabled"]
    enabled = plugin("enable", "hello", "--json", "--config", config, env=_env(tmp_path))
    assert (enabled.code, enabled.document["state"]) == (0, "enabled"), enabled.stdout
    listed = plugin("list", "--json", "--config", config, env=_env(tmp_path))
    assert [p["discovery"] for p in listed.document["plugins"]] == ["enabled"]


def test_yaml_1_1_words_are_plugin_ids_as_for_the_daemon(tmp_path: Path) -> None:
    """``on`` is a string to serde_yaml, so ``disabled: [on]`` disables the plugin ``on``."""
    root = tmp_path / "plugins"
    config = _config(tmp_path, f"discovery:\n  search_paths: ['{root}']\n  disabled: [on, yes]\n")
    tarball = write_plugin(tmp_path / "dist", "on", "1.0.0")
    installed = plugin(
        "install", tarball, "--yes", "--json", "--config", config, env=_env(tmp_path)
    )
    assert installed.code == 0, installed.stdout
    listed = plugin("list", "--json", "--config", config, env=_env(tmp_path))
    assert listed.code == 0, listed.stdout
    assert [(p["id"], p["discovery"]) for p in listed.document["plugins"]] == [("on", "disabled")]
    enabled = plugin("enable", "on", "--json", "--config", config, env=_env(tmp_path))
    assert (enabled.code, enabled.document["changed"]) == (0, True), enabled.stdout
    assert "disabled: [yes]" in (config / "plugins" / "discovery.yaml").read_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # A YAML 1.1 boolean is the string "yes" to the daemon: not a bool.
        ("discovery:\n  follow_symlinks: yes\n", "`discovery.follow_symlinks` must be"),
        # serde_yaml refuses a key given twice; a later one must not silently win.
        (
            "discovery:\n  search_paths: [/one]\n  search_paths: [/two]\n",
            "defined more than once",
        ),
        # `<<` is an ordinary (unknown) key to serde_yaml, not a merge.
        ("discovery:\n  search_paths: [/one]\n  <<: {follow_symlinks: true}\n", "unknown key"),
        # libyaml refuses an escape naming a surrogate (unsafe-libyaml src/scanner.rs).
        ('discovery:\n  search_paths: ["/one\\ud800"]\n', "invalid Unicode character escape"),
    ],
)
def test_what_the_daemon_refuses_is_a_configuration_error(
    tmp_path: Path, text: str, message: str
) -> None:
    config = _config(tmp_path, text)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    for args in (("list",), ("install", str(tarball), "--yes"), ("disable", "hello")):
        result = plugin(*args, "--json", "--config", config, env=_env(tmp_path), cwd=tmp_path)
        assert (result.code, result.document["kind"]) == (2, "config"), (args, result.stdout)
        assert message in result.document["error"], result.document["error"]
    assert not (tmp_path / "home").exists()
    assert not (tmp_path / "one").exists()
    assert (config / "plugins" / "discovery.yaml").read_text() == text


@pytest.mark.parametrize("entry", ["''", "$NEXO_TEST_EMPTY"])
def test_an_empty_search_path_is_skipped_never_the_working_directory(
    tmp_path: Path, entry: str
) -> None:
    other = tmp_path / "second"
    config = _config(tmp_path, f"discovery:\n  search_paths: [{entry}, '{other}']\n")
    work = tmp_path / "work"
    work.mkdir()
    env = {**_env(tmp_path), "NEXO_TEST_EMPTY": ""}
    listed = plugin("list", "--json", "--config", config, env=env, cwd=work)
    assert listed.code == 0, listed.stdout
    assert listed.document["roots"] == [str(other)]
    assert "is empty" in listed.stderr
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = plugin("install", tarball, "--yes", "--json", "--config", config, env=env, cwd=work)
    assert installed.code == 0, installed.stdout
    assert installed.document["path"] == str(other / "hello-1.0.0")
    assert list(work.iterdir()) == []


def test_a_search_path_holding_a_nul_byte_is_skipped(tmp_path: Path) -> None:
    """``"\\0"`` in a double-quoted YAML string (found by tests/fuzz/test_fuzz_files.py) names
    no directory: skipped with a warning, as an empty path is, by every command that reads the
    search paths, never an internal error."""
    other = tmp_path / "second"
    config = _config(tmp_path, f'discovery:\n  search_paths: ["/tmp/a\\0b", "{other}"]\n')
    env = _env(tmp_path)
    listed = plugin("list", "--json", "--config", config, env=env)
    assert listed.code == 0, listed.stderr
    assert listed.document["roots"] == [str(other)]
    assert "holds a NUL byte" in listed.stderr
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = plugin("install", tarball, "--yes", "--json", "--config", config, env=env)
    assert installed.code == 0, installed.stderr
    assert installed.document["path"] == str(other / "hello-1.0.0")
    for command in ("disable", "enable"):
        switched = plugin(command, "hello", "--yes", "--json", "--config", config, env=env)
        assert switched.code == 0, switched.stderr


def _two_roots(tmp_path: Path) -> tuple[Path, Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    config = _config(tmp_path, f"discovery:\n  search_paths: ['{first}', '{second}']\n")
    return config, first, second


def test_enable_and_disable_find_a_plugin_in_any_search_path(tmp_path: Path) -> None:
    """The daemon discovers plugins in every search path; ``list`` shows them all, and
    ``disable`` must reach each one ``list`` shows, not only those of the install root."""
    config, _, second = _two_roots(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = _env(tmp_path)
    assert plugin("install", tarball, "--yes", "--dest", second, env=env).code == 0
    listed = plugin("list", "--json", "--config", config, env=env)
    assert [p["path"] for p in listed.document["plugins"]] == [str(second / "hello-1.0.0")]
    disabled = plugin("disable", "hello", "--json", "--config", config, env=env)
    assert (disabled.code, disabled.document.get("state")) == (0, "disabled"), disabled.stdout
    listed = plugin("list", "--json", "--config", config, env=env)
    assert [p["discovery"] for p in listed.document["plugins"]] == ["disabled"]
    assert plugin("enable", "hello", "--config", config, env=env).code == 0


def test_disable_reaches_a_linked_plugin_and_one_with_a_broken_receipt(tmp_path: Path) -> None:
    """The daemon loads a development link and a plugin whose receipt is unreadable (it reads
    manifests, not receipts): both can be kept from it."""
    config, first, _ = _two_roots(tmp_path)
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "broken", "1.0.0")
    assert plugin("install", tarball, "--yes", "--config", config, env=env).code == 0
    (first / "broken-1.0.0" / ".nexo-install.json").write_text('{"id": "broken", oops')
    checkout = tmp_path / "checkout"
    created = plugin("new", "devplug", "--lang", "python", env=env, cwd=tmp_path)
    assert created.code == 0, created.stderr
    (tmp_path / "devplug").rename(checkout)
    linked = plugin("install", "--link", checkout, "--yes", "--config", config, env=env)
    assert linked.code == 0, linked.stderr
    for plugin_id in ("devplug", "broken"):
        result = plugin("disable", plugin_id, "--json", "--config", config, env=env)
        assert (result.code, result.document.get("state")) == (0, "disabled"), result.stdout
    text = (config / "plugins" / "discovery.yaml").read_text()
    assert "disabled: [devplug, broken]" in text
    ghost = plugin("disable", "ghost", "--json", "--config", config, env=env)
    assert (ghost.code, ghost.document["kind"]) == (1, "not_installed")
    assert (config / "plugins" / "discovery.yaml").read_text() == text


@pytest.mark.parametrize("dry_run", [False, True])
def test_an_install_root_that_is_a_file_is_a_configuration_error_before_any_work(
    tmp_path: Path, dry_run: bool
) -> None:
    """``--dest FILE`` is refused at once (exit 2); so is a first search path that names a
    file, which no plugin can be installed into: not a late ``io`` failure, nor a dry run
    that says an install would succeed."""
    planted = tmp_path / "not-a-root"
    planted.write_text("a file\n")
    config = _config(tmp_path, f"discovery:\n  search_paths: ['{planted}']\n")
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    extra = ("--dry-run",) if dry_run else ()
    result = plugin(
        "install", tarball, "--yes", "--json", "--config", config, *extra, env=_env(tmp_path)
    )
    assert (result.code, result.document["kind"]) == (2, "config"), result.stdout
    error = result.document["error"]
    assert str(planted) in error
    assert "discovery.yaml" in error
    assert planted.read_text() == "a file\n"
    # list still lists what the other roots hold (the daemon walks a file and finds nothing).
    listed = plugin("list", "--json", "--config", config, env=_env(tmp_path))
    assert (listed.code, listed.document["plugins"]) == (0, [])


def test_check_of_an_installed_id_finds_it_in_any_search_path(tmp_path: Path) -> None:
    """``check ID`` spawns the installed plugin the daemon would load, whichever search path
    holds it (``list`` shows it there), not only one in the install root."""
    config, _, second = _two_roots(tmp_path)
    env = _env(tmp_path)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    assert plugin("install", tarball, "--yes", "--dest", second, env=env).code == 0
    work = tmp_path / "work"
    work.mkdir()
    checked = plugin("check", "hello", "--json", "--config", config, env=env, cwd=work)
    assert checked.document.get("kind") != "target_invalid", checked.stdout
    assert checked.document["plugin"]["root"] == str(second / "hello-1.0.0")
    missing = plugin("check", "ghost", "--json", "--config", config, env=env, cwd=work)
    assert (missing.code, missing.document["kind"]) == (2, "target_invalid")


def test_completion_of_installed_ids_covers_every_search_path(tmp_path: Path) -> None:
    config, first, second = _two_roots(tmp_path)
    env = _env(tmp_path)
    for plugin_id, root in (("alpha", first), ("beta", second)):
        tarball = write_plugin(tmp_path / "dist", plugin_id, "1.0.0")
        assert plugin("install", tarball, "--yes", "--dest", root, env=env).code == 0
    words = f"nexo plugin remove --config {config} "
    asked = {
        **env,
        "_NEXO_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split())),
    }
    completed = nexo(env=asked, cwd=tmp_path)
    assert completed.code == 0, completed.stderr
    assert completed.stdout.split() == ["alpha", "beta"]


def test_a_discovery_file_that_is_no_regular_file_is_refused_not_taken_for_absent(
    tmp_path: Path,
) -> None:
    """The daemon loads the defaults only when the file does not exist; a directory in its
    place is a file it cannot read (its config load fails), so no command may fall back to
    ``$NEXO_HOME/state/plugins`` as if nothing were configured."""
    config = tmp_path / "etc-nexo"
    (config / "plugins" / "discovery.yaml").mkdir(parents=True)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    for args in (("list",), ("install", str(tarball), "--yes"), ("disable", "hello")):
        result = plugin(*args, "--json", "--config", config, env=_env(tmp_path))
        assert (result.code, result.document["kind"]) == (2, "config"), (args, result.stdout)
        assert "discovery.yaml" in result.document["error"]
    assert not (tmp_path / "home").exists()
    # A dangling link is what the daemon takes for no file: the defaults.
    (config / "plugins" / "discovery.yaml").rmdir()
    (config / "plugins" / "discovery.yaml").symlink_to(tmp_path / "nowhere.yaml")
    listed = plugin("list", "--json", "--config", config, env=_env(tmp_path))
    assert listed.code == 0, listed.stdout
    assert listed.document["dest"] == str(tmp_path / "home" / "state" / "plugins")
