"""Operator commands from the outside, as a script or a person at a shell meets them: an
empty argument (an unset shell variable) is said to be empty, with a usage error and one
JSON document, and nothing is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.cli import clean_env, nexo, stand_in_env
from support.github_server import GitHubServer, github_server
from support.tarballs import release_assets, tree_snapshot

__all__ = ["github_server"]


@pytest.mark.parametrize("source", ["", "  "])
@pytest.mark.parametrize("command", ["install", "info"])
def test_an_empty_source_is_said_to_be_empty_not_a_directory(
    tmp_path: Path, command: str, source: str
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo(
        "plugin", command, source, "--json", "--dest" if command == "install" else "--timeout",
        str(tmp_path / "root") if command == "install" else "5", env=env, cwd=tmp_path,
        in_process=True,
    )  # fmt: skip
    assert (result.code, result.document["kind"]) == (2, "source_invalid"), result.stdout
    assert "it is empty" in result.document["error"]
    assert "directory" not in result.document["error"]
    assert list(tmp_path.iterdir()) == []


def test_info_and_a_dry_run_do_not_say_they_install_an_unsigned_plugin(tmp_path: Path) -> None:
    """``info`` (and ``install --dry-run``) install nothing: the NOT SIGNED warning says what
    an install would do, while a real install says what it does."""
    from support.tarballs import write_plugin

    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "root"
    for args in (("info", tarball), ("install", tarball, "--dry-run", "--dest", root)):
        result = nexo("plugin", *args, "--json", env=env, in_process=True)
        assert result.code == 0, result.stdout
        (warning,) = [w for w in result.document["warnings"] if "NOT SIGNED" in w]
        assert "an install would take it unverified" in warning, warning
        assert "installing it" not in result.stderr
    assert not root.exists()
    installed = nexo(
        "plugin", "install", tarball, "--yes", "--dest", root, "--json", env=env, in_process=True
    )
    assert installed.code == 0, installed.stdout
    assert "NOT SIGNED; installing it unverified" in installed.stderr


@pytest.mark.parametrize(
    "command", ["hold", "unhold", "rollback", "remove", "upgrade", "enable", "disable"]
)
def test_an_id_not_installed_changes_nothing_not_even_a_new_root(
    tmp_path: Path, command: str
) -> None:
    """``not_installed`` (exit 1) for a root that does not exist yet: it is not created, nor
    its lock file; a hold left behind by hand removal is still released."""
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "root"
    result = nexo(
        "plugin", command, "ghost", "--dest", root, "--yes", "--json", env=env, in_process=True
    )
    assert (result.code, result.document["kind"]) == (1, "not_installed"), result.stdout
    assert not root.exists()
    assert not (tmp_path / "home").exists()


def _hello_installed(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment and the root of a fresh install of ``hello`` 1.0.0 from a file."""
    from support.tarballs import write_plugin

    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "root"
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    installed = nexo(
        "plugin", "install", tarball, "--dest", root, "--yes", env=env, in_process=True
    )
    assert installed.code == 0, installed.stderr
    return env, root


def test_unhold_releases_a_hold_whose_plugin_was_removed_by_hand(tmp_path: Path) -> None:
    env, root = _hello_installed(tmp_path)
    held = nexo("plugin", "hold", "hello", "--dest", root, "--json", env=env, in_process=True)
    assert held.document["changed"] is True
    shutil.rmtree(root / "hello-1.0.0")
    released = nexo("plugin", "unhold", "hello", "--dest", root, "--json", env=env, in_process=True)
    assert (released.code, released.document["changed"]) == (0, True), released.stdout
    before = tree_snapshot(tmp_path)
    again = nexo("plugin", "unhold", "hello", "--dest", root, "--json", env=env, in_process=True)
    assert (again.code, again.document["kind"]) == (1, "not_installed")
    assert tree_snapshot(tmp_path) == before


def test_hold_of_a_plugin_whose_receipt_is_unreadable_is_refused(tmp_path: Path) -> None:
    """A receipt nexo-pkg cannot read says no version: ``hold`` refuses it as ``upgrade``
    does (``not_installed`` naming it, reinstall with ``--force``), rather than holding the
    plugin "at ?", and writes no hold."""
    env, root = _hello_installed(tmp_path)
    (root / "hello-1.0.0" / ".nexo-install.json").write_text('{"id":')
    before = tree_snapshot(tmp_path)
    held = nexo("plugin", "hold", "hello", "--dest", root, "--json", env=env, in_process=True)
    assert (held.code, held.document["kind"]) == (1, "not_installed"), held.stdout
    assert "receipt unreadable" in held.document["error"]
    assert "--force" in held.document["error"]
    assert not (root / ".nexo" / "holds" / "hello.json").exists()
    assert tree_snapshot(tmp_path) == before


_UNWORKABLE = [
    (["--require-signature", "--skip-signature-verify"], "usage", "exclude each other"),
    (["--timeout", "-1"], "usage", "not a positive number of seconds"),
    (["--target", "bogus"], "usage", "not a target triple"),
    (["--github-api-url", "notaurl"], "usage", "is not an http(s) URL"),
    (["--trusted-keys", "/nonexistent/trusted_keys.toml"], "policy_invalid", "does not"),
]


@pytest.mark.parametrize("unworkable", _UNWORKABLE, ids=[flags[0] for flags, _, _ in _UNWORKABLE])
@pytest.mark.parametrize("target", [["hello"], ["--all"]])
def test_upgrade_with_flags_that_cannot_work_is_refused_at_once(
    tmp_path: Path,
    github_server: GitHubServer,
    target: list[str],
    unworkable: tuple[list[str], str, str],
) -> None:
    """Flags that cannot work (``--require-signature`` with ``--skip-signature-verify``, SPEC
    §5; a timeout, target, API URL or policy file that is no such thing) are a usage or
    configuration error (exit 2) for ``upgrade`` too, before any plugin is looked at: not a
    "held, nothing to do" success for one plugin, nor one failure per plugin for ``--all``."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    env = stand_in_env(tmp_path / "home", github_server.url)
    root = tmp_path / "root"
    installed = nexo(
        "plugin", "install", "acme/hello", "--dest", root, "--yes", env=env, in_process=True
    )
    assert installed.code == 0, installed.stderr
    # Held: `upgrade hello` has nothing to do, which must not hide the usage error.
    held = nexo("plugin", "hold", "hello", "--dest", root, env=env, in_process=True)
    assert held.code == 0, held.stderr
    asked = len(github_server.requests)
    flags, kind, says = unworkable
    result = nexo(
        "plugin", "upgrade", *target, "--dest", root, *flags, "--yes", "--json", env=env,
        in_process=True,
    )  # fmt: skip
    assert (result.code, result.document["kind"]) == (2, kind), result.stdout
    assert says in result.document["error"]
    assert len(github_server.requests) == asked


def test_outdated_of_a_mistyped_id_names_the_closest_installed_ones(tmp_path: Path) -> None:
    """``outdated wether`` is ``not_installed`` with ``Did you mean 'weather'?`` (and
    ``suggestions``), as every other command taking an installed id says it; a text that
    can be no plugin's id is a usage error; nothing is asked of any source."""
    from support.tarballs import write_plugin

    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "root"
    tarball = write_plugin(tmp_path / "dist", "weather", "1.0.0")
    installed = nexo(
        "plugin", "install", tarball, "--dest", root, "--yes", env=env, in_process=True
    )
    assert installed.code == 0, installed.stderr
    result = nexo(
        "plugin", "outdated", "wether", "--dest", root, "--json", env=env, in_process=True
    )
    assert (result.code, result.document["kind"]) == (1, "not_installed"), result.stdout
    assert result.document["suggestions"] == ["weather"]
    said = nexo("plugin", "outdated", "weather", "wether", "--dest", root, env=env, in_process=True)
    assert said.code == 1
    assert said.error_line.endswith("Did you mean 'weather'? [not_installed]"), said.stderr
    assert said.stdout == ""
    bad = nexo("plugin", "outdated", "Bad Id", "--dest", root, "--json", env=env, in_process=True)
    assert (bad.code, bad.document["kind"]) == (2, "usage"), bad.stdout


def test_outdated_says_held_for_a_plugin_held_on_its_tag(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    """A plugin installed from a tag and then held (by ``hold`` or a ``rollback``) is
    ``held`` in ``outdated``, as ``upgrade`` names it, not ``pinned``; its release of the
    hold makes it ``pinned`` again. Neither counts for ``--exit-code``."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    github_server.publish("acme", "hello", "v1.1.0", release_assets("hello", "1.1.0"))
    env = stand_in_env(tmp_path / "home", github_server.url)
    root = tmp_path / "root"
    installed = nexo(
        "plugin", "install", "acme/hello@v1.0.0", "--dest", root, "--yes", env=env,
        in_process=True,
    )  # fmt: skip
    assert installed.code == 0, installed.stderr

    def status() -> tuple[int, str]:
        shown = nexo(
            "plugin", "outdated", "--exit-code", "--dest", root, "--json", env=env,
            in_process=True,
        )  # fmt: skip
        (entry,) = shown.document["plugins"]
        return shown.code, entry["status"]

    assert status() == (0, "pinned")
    assert nexo("plugin", "hold", "hello", "--dest", root, env=env, in_process=True).code == 0
    assert status() == (0, "held")
    table = nexo("plugin", "outdated", "--dest", root, env=env, in_process=True)
    assert "held (see unhold)" in table.stdout, table.stdout
    upgraded = nexo("plugin", "upgrade", "hello", "--dest", root, "--yes", env=env, in_process=True)
    assert "held at 1.0.0" in upgraded.stderr  # what outdated now says too
    assert nexo("plugin", "unhold", "hello", "--dest", root, env=env, in_process=True).code == 0
    assert status() == (0, "pinned")


def test_a_hold_is_its_roots_not_every_search_paths(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    """The daemon's configuration names two search paths, each with ``hello`` (the second
    one shadowed). A hold lives in its root (``<root>/.nexo/holds``): ``list`` and
    ``outdated`` show held only the copy in the root that holds it."""
    github_server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    env = stand_in_env(tmp_path / "home", github_server.url)
    first, second = tmp_path / "first", tmp_path / "second"
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths:\n    - {first}\n    - {second}\n"
    )
    for root in (first, second):
        installed = nexo(
            "plugin", "install", "acme/hello", "--dest", root, "--yes", env=env,
            in_process=True,
        )  # fmt: skip
        assert installed.code == 0, installed.stderr
    held = nexo("plugin", "hold", "hello", "--dest", second, env=env, in_process=True)
    assert held.code == 0, held.stderr
    assert (second / ".nexo" / "holds" / "hello.json").is_file()
    assert not (first / ".nexo" / "holds" / "hello.json").exists()

    listed = nexo("plugin", "list", "--config", config, "--json", env=env, in_process=True)
    shown = {entry["path"]: entry["held"] for entry in listed.document["plugins"]}
    assert shown == {str(first / "hello-1.0.0"): False, str(second / "hello-1.0.0"): True}
    rows = nexo("plugin", "list", "--config", config, env=env, in_process=True).stdout
    states = {line.split()[-1]: line.split()[-2] for line in rows.splitlines()}
    assert states == {
        str(first / "hello-1.0.0"): "enabled",
        str(second / "hello-1.0.0"): "enabled,held",
    }

    looked = nexo("plugin", "outdated", "--config", config, "--json", env=env, in_process=True)
    statuses = {entry["path"]: entry["status"] for entry in looked.document["plugins"]}
    assert statuses == {str(first / "hello-1.0.0"): "current", str(second / "hello-1.0.0"): "held"}


def test_an_install_that_finds_the_plugin_in_place_keeps_its_hold(tmp_path: Path) -> None:
    """A provisioning script that runs ``install`` again changes nothing, the hold included;
    an install that brings in another version ends it (the operator named that version)."""
    from support.tarballs import write_plugin

    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "root"
    first = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    second = write_plugin(tmp_path / "dist", "hello", "1.1.0")

    def install(tarball: Path) -> dict[str, object]:
        done = nexo(
            "plugin", "install", tarball, "--dest", root, "--yes", "--json", env=env,
            in_process=True,
        )  # fmt: skip
        assert done.code == 0, done.stdout
        return done.document

    def held() -> list[tuple[str, bool]]:
        listed = nexo("plugin", "list", "--dest", root, "--json", env=env, in_process=True)
        return [(p["version"], p["held"]) for p in listed.document["plugins"] if not p["kept"]]

    install(first)
    assert nexo("plugin", "hold", "hello", "--dest", root, env=env, in_process=True).code == 0
    again = install(first)
    assert again["was_already_present"] is True
    assert held() == [("1.0.0", True)]
    install(second)
    assert held() == [("1.1.0", False)]


def test_check_of_a_mistyped_installed_id_names_the_closest_ones(tmp_path: Path) -> None:
    """``check wether`` is a usage error naming the installed ids closest to it, as every
    other command taking an installed id says it; an id close to none gets no guess."""
    from support.tarballs import write_plugin

    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    root = tmp_path / "root"
    tarball = write_plugin(tmp_path / "dist", "weather", "1.0.0")
    installed = nexo(
        "plugin", "install", tarball, "--dest", root, "--yes", env=env, in_process=True
    )
    assert installed.code == 0, installed.stderr
    # A receipt that is no JSON object (or no JSON) is passed over, not a crash.
    for name, text in (("odd-1.0.0", "[]"), ("bad-1.0.0", "{")):
        (root / name).mkdir()
        (root / name / ".nexo-install.json").write_text(text)
    said = nexo("plugin", "check", "wether", "--dest", root, env=env, cwd=tmp_path)
    assert said.code == 2
    assert said.error_line.endswith(
        "(use --dest to look elsewhere). Did you mean 'weather'? [target_invalid]"
    )
    far = nexo("plugin", "check", "zzz", "--dest", root, env=env, cwd=tmp_path)
    assert far.code == 2
    assert far.error_line.endswith("(use --dest to look elsewhere) [target_invalid]")


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]], ids=["run", "dry-run"])
def test_rollback_of_a_plugin_whose_receipt_is_unreadable_is_refused(
    tmp_path: Path, dry_run: list[str]
) -> None:
    """With the installed version's receipt unreadable, ``rollback`` refuses as ``hold``
    does (``not_installed`` naming the receipt, reinstall with ``--force``) and changes
    nothing, rather than putting the kept version back beside the unreadable one (two
    installs of one id, one of them shadowed)."""
    from support.tarballs import write_plugin

    env, root = _hello_installed(tmp_path)
    newer = write_plugin(tmp_path / "dist", "hello", "1.1.0")
    upgraded = nexo("plugin", "install", newer, "--dest", root, "--yes", env=env, in_process=True)
    assert upgraded.code == 0, upgraded.stderr
    (root / "hello-1.1.0" / ".nexo-install.json").write_text('{"id":')
    before = tree_snapshot(tmp_path)
    refused = nexo(
        "plugin", "rollback", "hello", *dry_run, "--dest", root, "--json", env=env,
        in_process=True,
    )  # fmt: skip
    assert (refused.code, refused.document["kind"]) == (1, "not_installed"), refused.stdout
    assert "receipt unreadable" in refused.document["error"]
    assert "; to roll it back, reinstall it with" in refused.document["error"]
    assert "--force" in refused.document["error"]
    assert tree_snapshot(tmp_path) == before
    said = nexo("plugin", "rollback", "hello", *dry_run, "--dest", root, env=env, in_process=True)
    assert said.code == 1
    assert said.stderr.rstrip().endswith("[not_installed]"), said.stderr
    assert tree_snapshot(tmp_path) == before


def test_upgrade_of_a_plugin_installed_from_a_file_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """A plugin installed from a local tarball has no source to follow: ``upgrade`` refuses
    it (``source_invalid``, naming ``install PATH``), text and ``--json`` alike, and writes
    nothing: no hold, no cache entry, no lock file touched."""
    env, root = _hello_installed(tmp_path)
    before = tree_snapshot(tmp_path)
    refused = nexo("plugin", "upgrade", "hello", "--dest", root, "--yes", "--json", env=env,
                   in_process=True)  # fmt: skip
    assert (refused.code, refused.document["kind"]) == (1, "source_invalid"), refused.stdout
    assert "installed from a local file" in refused.document["error"]
    said = nexo("plugin", "upgrade", "hello", "--dest", root, "--yes", env=env, in_process=True)
    assert said.code == 1
    assert said.stderr.rstrip().endswith(" [source_invalid]"), said.stderr
    assert tree_snapshot(tmp_path) == before
