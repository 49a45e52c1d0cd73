"""A FIFO or a device planted where a configuration file is looked for ends the command at once
with its kind (exit 2), instead of hanging on a read that never returns or streaming without
end; nothing is installed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import write_plugin

from nexo_pkg.core.files import NotRegularFileError, read_config_bytes

# Each run is a subprocess: a read of the FIFO would block forever, and its timeout fails the
# test instead.
TIMEOUT = 60


def test_a_fifo_as_the_trust_policy_refuses_the_install(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "extensions").mkdir(parents=True)
    os.mkfifo(config / "extensions" / "trusted_keys.toml")
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    dest = tmp_path / "root"
    result = nexo(
        "plugin", "install", str(tarball), "--yes", "--json", "--config", str(config),
        "--dest", str(dest), env=clean_env(NEXO_HOME=str(tmp_path / "home")), cwd=tmp_path,
        timeout=TIMEOUT,
    )  # fmt: skip
    assert result.exit_code == 2, result.stderr
    document = result.document
    assert document["kind"] == "policy_invalid"
    assert "not a regular file" in document["error"]
    assert not dest.exists()


def test_a_fifo_as_the_trust_policy_is_reported_by_trust_list(tmp_path: Path) -> None:
    config = tmp_path / "config"
    (config / "extensions").mkdir(parents=True)
    os.mkfifo(config / "extensions" / "trusted_keys.toml")
    result = nexo(
        "plugin", "trust", "list", "--config", str(config),
        env=clean_env(NEXO_HOME=str(tmp_path / "home")), cwd=tmp_path, timeout=TIMEOUT,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "not a regular file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_fifo_as_the_registry_credentials_is_registry_config(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "auth.json")
    empty_config = tmp_path / "no-config"
    empty_config.mkdir()
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"), REGISTRY_AUTH_FILE=str(tmp_path / "auth.json")
    )
    result = nexo(
        "plugin", "install", "oci://127.0.0.1:9/plugins/hello:1.0.0", "--plain-http", "--yes",
        "--json", "--config", str(empty_config), "--dest", str(tmp_path / "root"),
        env=env, cwd=tmp_path, timeout=TIMEOUT,
    )  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert result.document["kind"] == "registry_config"
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize("planted", ["fifo", "device", "directory"])
@pytest.mark.parametrize("found_by", ["DOCKER_CONFIG", "REGISTRY_AUTH_FILE"])
def test_a_registry_credentials_file_that_is_not_a_file_is_named_in_words(
    tmp_path: Path, planted: str, found_by: str
) -> None:
    """The line names the file once and says what is wrong in words (not Python's
    ``[Errno 22] …: '/path'``), in text and in ``--json`` alike."""
    docker = tmp_path / "docker"
    docker.mkdir()
    credentials = docker / "config.json"
    if planted == "fifo":
        os.mkfifo(credentials)
    elif planted == "device":
        credentials.symlink_to("/dev/zero")
    else:
        credentials.mkdir()
    (tmp_path / "no-config").mkdir()
    variable = str(docker if found_by == "DOCKER_CONFIG" else credentials)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), **{found_by: variable})
    args = ("plugin", "install", "oci://127.0.0.1:9/plugins/hello:1.0.0", "--plain-http",
            "--yes", "--config", str(tmp_path / "no-config"),
            "--dest", str(tmp_path / "root"))  # fmt: skip
    runs = [
        nexo(*args, *extra, env=env, cwd=tmp_path, timeout=TIMEOUT) for extra in ((), ("--json",))
    ]
    expected = f"cannot read registry config {credentials}: is not a regular file"
    text, as_json = runs
    for result in runs:
        assert result.exit_code == 2, result.stderr
        assert "Traceback" not in result.stderr
    assert as_json.document["kind"] == "registry_config"
    assert as_json.document["error"] == expected
    assert text.stderr.splitlines()[-1] == f"error: {expected} [registry_config]"
    assert not (tmp_path / "root").exists()


def test_reading_a_device_or_a_directory_is_refused_at_once(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFileError):
        read_config_bytes(Path("/dev/zero"), 16)
    with pytest.raises(NotRegularFileError):
        read_config_bytes(tmp_path, 16)
    with pytest.raises(FileNotFoundError):
        read_config_bytes(tmp_path / "missing", 16)


def test_a_regular_file_or_a_link_to_one_is_read_up_to_the_limit(tmp_path: Path) -> None:
    target = tmp_path / "policy.toml"
    target.write_bytes(b"x" * 100)
    link = tmp_path / "link.toml"
    link.symlink_to(target)
    assert read_config_bytes(link, 10) == b"x" * 11
    assert read_config_bytes(target, 1000) == b"x" * 100
