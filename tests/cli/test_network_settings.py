"""Network settings that cannot work end the command with one line and one JSON document,
exit 2, before any request: an API base that is no URL, a token variable holding what no token
holds (never echoed), CA settings that name no certificates."""

from __future__ import annotations

from pathlib import Path

import pytest
from adversarial.harness import snapshot
from support.cli import CliResult, clean_env, nexo
from support.stderr import without_notes


def _install(tmp_path: Path, **env: str) -> CliResult:
    variables = clean_env(NEXO_HOME=str(tmp_path / "home"), NEXO_HTTP_RETRY_BASE_MS="1")
    variables.update(env)
    args = ["plugin", "install", "acme/hello", "--dest", str(tmp_path / "dest"), "--yes"]
    return nexo(*args, "--json", "--timeout", "5", env=variables, in_process=True)


def _assert_refused(result: CliResult, kind: str) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.document["kind"] == kind
    assert "Traceback" not in result.stderr
    assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr


@pytest.mark.parametrize(
    "base", ["http://[::1", "http://127.0.0.1:99999", "http://127.0.0.1:0", "https://"]
)
def test_an_api_base_that_is_no_url_is_a_usage_error(tmp_path: Path, base: str) -> None:
    result = _install(tmp_path, NEXO_GITHUB_API_BASE=base)
    _assert_refused(result, "usage")
    assert not (tmp_path / "dest").exists()


@pytest.mark.parametrize(
    "token", ["ghp_s\u00e9cret", "ghp_one\nghp_two", "ghp_one ghp_two", "ghp_one\tghp_two"]
)
def test_a_token_no_github_token_could_be_is_a_usage_error(tmp_path: Path, token: str) -> None:
    for name in ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN"):
        result = _install(tmp_path, NEXO_GITHUB_API_BASE="https://api.github.com", **{name: token})
        _assert_refused(result, "usage")
        assert name in result.document["error"]
        # A credential, however malformed, is never printed.
        assert "ghp_" not in result.stdout + result.stderr


@pytest.mark.parametrize("content", [None, b"", b"not a certificate\n"])
def test_ca_settings_that_name_no_certificates_are_a_configuration_error(
    tmp_path: Path, content: bytes | None
) -> None:
    bundle = tmp_path / "ca.pem"
    if content is not None:
        bundle.write_bytes(content)
    home = tmp_path / "home"
    home.mkdir()
    before = snapshot(home)
    result = _install(
        tmp_path, NEXO_GITHUB_API_BASE="https://127.0.0.1:9", SSL_CERT_FILE=str(bundle)
    )
    _assert_refused(result, "config")
    assert "SSL_CERT_FILE" in result.document["error"]
    assert snapshot(home) == before


@pytest.mark.parametrize("planted", ["missing", "a file", "empty"])
def test_a_ca_directory_that_holds_no_certificates_is_a_configuration_error(
    tmp_path: Path, planted: str
) -> None:
    """OpenSSL accepts an ``SSL_CERT_DIR`` it cannot read as a directory without
    certificates, and every https request would then fail to verify (a ``network`` error,
    exit 1, blaming the server): the setting is named instead, before any request."""
    directory = tmp_path / "ca-dir"
    if planted == "a file":
        directory.write_text("")
    elif planted == "empty":
        directory.mkdir()
    home = tmp_path / "home"
    # The directory alone names the CAs (an SSL_CERT_FILE as well would still verify).
    result = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE="https://127.0.0.1:9",
        SSL_CERT_DIR=str(directory),
        SSL_CERT_FILE="",
    )
    _assert_refused(result, "config")
    assert f"SSL_CERT_DIR={directory}" in result.document["error"]
    assert not (home / "state").exists()
