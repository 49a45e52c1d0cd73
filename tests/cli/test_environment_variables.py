"""The environment table of the command line (SPEC §1), from the outside: a variable holding
a value that cannot work is named in the one error line, so the operator knows which setting to
fix; nothing is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import write_plugin


@pytest.mark.parametrize("value", ["bogus", "x86_64-unknown-linux-gnu ", "../../etc"])
def test_an_install_target_variable_that_is_no_triple_is_named(tmp_path: Path, value: str) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), NEXO_INSTALL_TARGET=value)
    dest = tmp_path / "plugins"
    result = nexo(
        "plugin", "install", tarball, "--yes", "--json", "--dest", dest, env=env, in_process=True
    )
    assert (result.code, result.document["kind"]) == (2, "usage"), result.stdout
    assert f"NEXO_INSTALL_TARGET={value!r}" in result.document["error"]
    assert "unset NEXO_INSTALL_TARGET" in result.document["error"]
    assert result.error_line.startswith("error: NEXO_INSTALL_TARGET=")
    assert not dest.exists()
    # The flag wins over the variable, and is named as the flag when it is the one at fault.
    flagged = nexo(
        "plugin",
        "install",
        tarball,
        "--yes",
        "--json",
        "--dest",
        dest,
        "--target",
        "nope",
        env=env,
        in_process=True,
    )
    assert (flagged.code, flagged.document["kind"]) == (2, "usage")
    assert "NEXO_INSTALL_TARGET" not in flagged.document["error"]
    assert "'nope'" in flagged.document["error"]
    fine = nexo(
        "plugin",
        "install",
        tarball,
        "--yes",
        "--json",
        "--dest",
        dest,
        "--target",
        "x86_64-unknown-linux-gnu",
        env=env,
        in_process=True,
    )
    assert fine.code == 0, fine.stdout


def test_an_empty_install_target_variable_is_unset(tmp_path: Path) -> None:
    """As the reference installer reads it (``resolve_target``: an empty value is ignored)."""
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), NEXO_INSTALL_TARGET="")
    result = nexo(
        "plugin",
        "install",
        tarball,
        "--yes",
        "--json",
        "--dest",
        tmp_path / "p",
        env=env,
        in_process=True,
    )
    assert result.code == 0, result.stdout


@pytest.mark.parametrize(
    "args",
    [("plugin", "list"), ("plugin", "cache", "dir"), ("plugin", "install", "acme/hello", "--yes")],
)
def test_no_home_directory_to_find_is_a_configuration_error_naming_nexo_home(
    monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    """A container run under a bare numeric uid has no ``HOME`` and no password-database
    entry: the default ``~/.nexo`` cannot be found, which is the operator's to set, not a bug."""
    import pwd

    def no_entry(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    env = clean_env()
    for name in ("HOME", "NEXO_HOME", "NEXO_CONFIG_DIR"):
        env.pop(name, None)
    result = nexo(*args, "--json", env=env, in_process=True)
    assert (result.code, result.document["kind"]) == (2, "config"), result.stdout
    assert "set NEXO_HOME" in result.document["error"]
    assert "internal" not in result.stderr


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"NEXO_GITHUB_API_BASE": "notaurl"}, "NEXO_GITHUB_API_BASE"),
        # GitHub Actions sets GITHUB_API_URL for every job: which variable is wrong matters.
        ({"GITHUB_API_URL": "ftp://ghe.example"}, "GITHUB_API_URL"),
        ({"NEXO_GITHUB_API_BASE": "", "GITHUB_API_URL": "http://"}, "GITHUB_API_URL"),
    ],
)
def test_an_api_base_variable_that_is_no_url_is_named(
    tmp_path: Path, settings: dict[str, str], named: str
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), **settings)
    for command in (("install", "acme/hello", "--yes"), ("info", "acme/hello")):
        result = nexo("plugin", *command, "--json", env=env, in_process=True)
        assert (result.code, result.document["kind"]) == (2, "usage"), result.stdout
        assert f"({named})" in result.document["error"]
        assert f"unset {named}" in result.document["error"]
    flagged = nexo(
        "plugin", "info", "acme/hello", "--github-api-url", "bad", "--json", env=env,
        in_process=True,
    )  # fmt: skip
    assert (flagged.code, flagged.document["kind"]) == (2, "usage")
    assert "(--github-api-url)" in flagged.document["error"]
    assert not (tmp_path / "home" / "state").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("plugin", "install", "acme/hello", "--yes"),
        ("plugin", "list"),
        ("plugin", "cache", "size"),
        ("plugin", "trust", "list"),
    ],
)
def test_a_nexo_home_that_is_a_file_is_named(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Not a trust-policy or cache failure deep inside it: the variable is what is wrong."""
    home = tmp_path / "home"
    home.write_text("not a directory\n")
    env = clean_env(NEXO_HOME=str(home))
    env.pop("NEXO_CONFIG_DIR", None)
    result = nexo(*args, "--json", env=env, cwd=tmp_path, in_process=True)
    assert (result.code, result.document["kind"]) == (2, "config"), result.stdout
    assert f"NEXO_HOME={home} is a file" in result.document["error"]
    assert home.read_text() == "not a directory\n"


@pytest.mark.parametrize(
    "args",
    [
        ("plugin", "cache", "clean", "--yes"),
        (
            "plugin",
            "trust",
            "add",
            "acme",
            "--identity",
            "https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1",
            "--yes",
        ),
        ("plugin", "list"),
    ],
)
def test_a_nexo_home_that_is_a_dangling_link_is_named(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """Nothing can be created through a link to a missing directory: the variable and the
    missing target are named (exit 2), not "File exists" from deep inside a command, and the
    target is not created."""
    home = tmp_path / "home"
    home.symlink_to(tmp_path / "gone")
    env = clean_env(NEXO_HOME=str(home))
    env.pop("NEXO_CONFIG_DIR", None)
    result = nexo(*args, "--json", env=env, cwd=tmp_path, in_process=True)
    assert (result.code, result.document["kind"]) == (2, "config"), result.stdout
    assert f"NEXO_HOME={home} is a symbolic link to {tmp_path / 'gone'}" in result.document["error"]
    assert home.is_symlink()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["home"]


def test_a_relative_nexo_home_is_printed_as_the_absolute_path_it_names(tmp_path: Path) -> None:
    """``NEXO_HOME=state nexo plugin cache dir``: as ``uv cache dir``, a path that works from
    any directory, the same one ``list`` reports as its root."""
    env = clean_env(NEXO_HOME="state")
    shown = nexo("plugin", "cache", "dir", env=env, cwd=tmp_path)
    assert shown.code == 0, shown.stderr
    assert shown.stdout == f"{tmp_path / 'state' / 'cache' / 'blobs'}\n"
    size = nexo("plugin", "cache", "size", "--json", env=env, cwd=tmp_path)
    assert size.document["path"] == str(tmp_path / "state" / "cache" / "blobs")
    listed = nexo("plugin", "list", "--json", env=env, cwd=tmp_path)
    assert listed.document["dest"] == str(tmp_path / "state" / "state" / "plugins")


@pytest.mark.skipif(os.name != "posix", reason="symbolic links without privileges")
def test_a_nexo_home_that_is_a_looping_link_is_named_as_one(tmp_path: Path) -> None:
    """A NEXO_HOME link that leads back to itself is said to loop, with the remedy that fits
    (remove it), not said to lead to a directory that "does not exist" and should be created:
    creating it is what the loop makes impossible."""
    home = tmp_path / "home"
    home.symlink_to(tmp_path / "back")
    (tmp_path / "back").symlink_to(home)
    env = clean_env(NEXO_HOME=str(home))
    env.pop("NEXO_CONFIG_DIR", None)
    result = nexo("plugin", "list", "--json", env=env, cwd=tmp_path, in_process=True)
    assert (result.code, result.document["kind"]) == (2, "config"), result.stdout
    assert result.document["error"] == (
        f"NEXO_HOME={home} is a symbolic link that loops; remove it, or point NEXO_HOME at another"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["back", "home"]
    assert home.is_symlink()
    assert (tmp_path / "back").is_symlink()


@pytest.mark.parametrize(
    "args",
    [("plugin", "list"), ("plugin", "cache", "dir"), ("plugin", "trust", "list")],
    ids=["list", "cache-dir", "trust-list"],
)
def test_a_nexo_home_below_a_file_is_named(tmp_path: Path, args: tuple[str, ...]) -> None:
    """NEXO_HOME=FILE/home can hold nothing: the variable and the file in the way are named
    (exit 2, ``config``), not an empty root reported as if it were one (``list``), a path that
    cannot exist printed (``cache dir``), or a trust policy "cannot read" (``trust list``)."""
    blocking = tmp_path / "notes.txt"
    blocking.write_text("operator's notes\n")
    env = clean_env(NEXO_HOME=str(blocking / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    result = nexo(*args, "--json", env=env, cwd=tmp_path, in_process=True)
    assert (result.code, result.document["kind"]) == (2, "config"), result.stdout
    assert result.document["error"] == (
        f"NEXO_HOME={blocking / 'home'} is below {blocking}, which is a file, not a directory; "
        "name the nexo home directory, or unset NEXO_HOME for ~/.nexo"
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["notes.txt"]
    assert blocking.read_text() == "operator's notes\n"
