"""A ``./config`` in the working directory (a cloned repository) supplies the install root and
the trust policy only when it is the user's own and not writable by group or others, as git's
``safe.directory``; whichever directory is used unasked is named on stderr, and a ``./config``
passed over is warned about."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.tarballs import write_plugin

NOBODY = 65534


def _policy(directory: Path, default: str) -> None:
    (directory / "extensions").mkdir(parents=True)
    (directory / "extensions" / "trusted_keys.toml").write_text(
        f'schema_version = "1.0"\ndefault = "{default}"\n', encoding="utf-8"
    )


def _install(tmp_path: Path, work: Path) -> CliResult:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    return nexo(
        "plugin",
        "install",
        str(tarball),
        "--dest",
        str(tmp_path / "root"),
        "--yes",
        "--json",
        env=env,
        cwd=work,
        in_process=True,
    )


@pytest.mark.parametrize(
    "planted",
    [
        "owned by another user",
        "writable by others",
        # Inside a directory of the user's own: whoever may write what is read from it may
        # supply the policy as well.
        "a subdirectory writable by others",
        "a policy file writable by others",
        "a policy file of another user",
        # It binds registry repositories to owners: which owner's entry judges a copy.
        "a registry binding file writable by others",
    ],
)
def test_an_untrusted_working_directory_config_does_not_replace_the_policy(
    tmp_path: Path, planted: str
) -> None:
    """The user's policy requires signatures; the clone's ``./config`` says ``ignore``."""
    _policy(tmp_path / "home" / "config", "require")
    work = tmp_path / "clone"
    _policy(work / "config", "ignore")
    # Whatever the umask: the user's own, writable by the user alone, but for what is planted.
    (work / "config").chmod(0o755)
    (work / "config" / "extensions").chmod(0o755)
    (work / "config" / "extensions" / "trusted_keys.toml").chmod(0o644)
    if planted == "owned by another user":
        for path in (work / "config", *(work / "config").rglob("*")):
            os.chown(path, NOBODY, NOBODY)
    elif planted == "writable by others":
        (work / "config").chmod(0o777)
    elif planted == "a subdirectory writable by others":
        (work / "config" / "extensions").chmod(0o777)
    elif planted == "a policy file writable by others":
        (work / "config" / "extensions" / "trusted_keys.toml").chmod(0o666)
    elif planted == "a registry binding file writable by others":
        bindings = work / "config" / "extensions" / "registry_owners.toml"
        bindings.write_text(
            '[[registries]]\nrepository = "r.example/plugins/hello"\nowner = "acme"\n',
            encoding="utf-8",
        )
        bindings.chmod(0o666)
    else:
        os.chown(work / "config" / "extensions" / "trusted_keys.toml", NOBODY, NOBODY)
    result = _install(tmp_path, work)
    assert result.exit_code == 1, result.stderr
    assert result.document["kind"] == "signature_missing"
    assert "ignoring ./config" in result.stderr
    assert str(tmp_path / "home" / "config") in result.stderr
    assert not (tmp_path / "root" / "hello-1.0.0").exists()


def test_the_user_s_own_working_directory_config_is_used_and_named(tmp_path: Path) -> None:
    _policy(tmp_path / "home" / "config", "require")
    work = tmp_path / "project"
    _policy(work / "config", "ignore")
    (work / "config").chmod(0o755)
    result = _install(tmp_path, work)
    assert result.exit_code == 0, result.stderr
    assert f"using the configuration directory {work / 'config'}" in result.stderr
    assert (tmp_path / "root" / "hello-1.0.0").is_dir()


def test_the_default_configuration_directory_is_named_once(tmp_path: Path) -> None:
    """Without ``--config`` or ``NEXO_CONFIG_DIR``, the directory in use is named on stderr,
    once, as a note: stdout stays the ``--json`` document, and ``--quiet`` drops the note.
    A directory that does not exist, or holds no file read from it, changes nothing: no
    note."""
    work = tmp_path / "elsewhere"
    work.mkdir()
    absent = _install(tmp_path, work)
    assert absent.exit_code == 0, absent.stderr
    assert "configuration directory" not in absent.stderr
    (tmp_path / "home" / "config").mkdir(parents=True)
    empty = _install(tmp_path, work)
    assert "configuration directory" not in empty.stderr
    _policy(tmp_path / "home" / "config", "warn")
    result = _install(tmp_path, work)
    assert result.exit_code == 0, result.stderr
    assert result.document["ok"] is True
    named = [line for line in result.stderr.splitlines() if "configuration directory" in line]
    assert named == [
        f"note: using the configuration directory {tmp_path / 'home' / 'config'} "
        "($NEXO_HOME/config; --config or NEXO_CONFIG_DIR names another)"
    ]
    assert "configuration directory" not in result.stdout
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    quiet = nexo(
        "--quiet",
        "plugin",
        "list",
        "--dest",
        str(tmp_path / "root"),
        "--json",
        env=env,
        cwd=work,
        in_process=True,
    )
    assert quiet.exit_code == 0, quiet.stderr
    assert "configuration directory" not in quiet.stderr


@pytest.mark.parametrize("how", ["--config", "NEXO_CONFIG_DIR"])
def test_a_configuration_directory_given_explicitly_is_not_announced(
    tmp_path: Path, how: str
) -> None:
    """The user named it: nothing to say."""
    config = tmp_path / "chosen"
    config.mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("NEXO_CONFIG_DIR", None)
    args = ["plugin", "list", "--dest", str(tmp_path / "root"), "--json"]
    if how == "--config":
        args += ["--config", str(config)]
    else:
        env["NEXO_CONFIG_DIR"] = str(config)
    result = nexo(*args, env=env, cwd=tmp_path, in_process=True)
    assert result.exit_code == 0, result.stderr
    assert "configuration directory" not in result.stderr
