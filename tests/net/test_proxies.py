"""The one client reaches a host through the proxy the environment names (``HTTP_PROXY``),
and directly for the hosts ``NO_PROXY`` lists. The proxy is a loopback server that records
the absolute URLs it is asked for; the host behind it is never resolved."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.github_server import GitHubServer
from support.http_kit import LoopbackServer, send
from support.stderr import without_notes
from support.tarballs import release_assets, tree_snapshot

from nexo_pkg.net.client import HttpClient


def _through_the_proxy(handler: BaseHTTPRequestHandler) -> None:
    send(handler, 200, b"through the proxy")


@pytest.fixture
def proxy() -> Iterator[LoopbackServer]:
    """Answers every GET; records each request target as sent (the absolute URL when it is
    asked as a proxy)."""
    with LoopbackServer(methods=("GET",), fallback=_through_the_proxy) as server:
        yield server


def _asked(proxy: LoopbackServer) -> list[str]:
    return [request.path for request in proxy.requests]


def _get(url: str) -> bytes:
    with HttpClient(timeout=10, retries=0) as client, client.open("GET", url, "a doc") as answer:
        return client.read_document(answer, "a doc", limit=1024)


def test_the_environment_s_proxy_is_used(
    proxy: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "localhost")
    assert _get("http://plugins.example.invalid/doc") == b"through the proxy"
    assert _asked(proxy) == ["http://plugins.example.invalid/doc"]


def test_no_proxy_hosts_are_reached_directly(
    proxy: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert _get(proxy.url + "/direct") == b"through the proxy"
    assert _asked(proxy) == ["/direct"]


@pytest.mark.parametrize(
    ("settings", "mounts"),
    [
        ({}, {}),
        ({"https": "proxy:3128"}, {"https://": "http://proxy:3128"}),
        ({"http": "socks5://p:1080"}, {"http://": "socks5://p:1080"}),
        (
            {"all": "http://p:1", "no": "localhost, 10.0.0.1,::1,.corp.example,https://x"},
            {
                "all://": "http://p:1",
                "all://localhost": None,
                "all://10.0.0.1": None,
                "all://[::1]": None,
                "all://*.corp.example": None,
                "https://x": None,
            },
        ),
        ({"https": "p:1", "no": "*"}, {}),
    ],
    ids=["none", "scheme-added", "socks", "no-proxy-shapes", "no-proxy-star"],
)
def test_proxy_settings_become_httpx_mounts(
    settings: dict[str, str], mounts: dict[str, str | None]
) -> None:
    from nexo_pkg.net.client import proxy_mounts

    assert proxy_mounts(settings) == mounts


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"HTTP_PROXY": "a"},
        {"http_proxy": "b", "HTTP_PROXY": "a"},
        {"http_proxy": "", "HTTP_PROXY": "a"},
        {"NO_PROXY": "x", "https_proxy": "p"},
        {"HTTP_PROXY": "a", "REQUEST_METHOD": "GET"},
        {"http_proxy": "b", "REQUEST_METHOD": "GET"},
        {"Http_Proxy": "m"},
        {"HTTPS_proxy": "n", "https_proxy": ""},
        {"ALL_PROXY": "q", "no_proxy": "localhost", "PATH": "/bin"},
    ],
)
def test_proxy_settings_are_read_as_the_standard_library_reads_them(
    environ: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import urllib.request

    from nexo_pkg.net.client import proxy_settings

    for name in list(os.environ):
        monkeypatch.delenv(name)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert proxy_settings(environ) == urllib.request.getproxies_environment()


# (variables, the variable the error must name); the API host is a loopback port nobody
# listens on, so a setting that were accepted would end in `network` (exit 1), not here.
_UNUSABLE = [
    ({"ALL_PROXY": "socks5://user:s3cret@127.0.0.1:1080"}, "ALL_PROXY"),
    ({"HTTP_PROXY": "http://user:s3cret@[::1"}, "HTTP_PROXY"),
    ({"HTTP_PROXY": "http://[fe80::zz]:3128"}, "HTTP_PROXY"),
    ({"https_proxy": "ftp://user:s3cret@127.0.0.1:21"}, "https_proxy"),
    ({"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "[127.0.0.1]"}, "NO_PROXY"),
    ({"HTTP_PROXY": "http://127.0.0.1:9", "no_proxy": "localhost,127.0.0.1:*"}, "no_proxy"),
    # httpx keeps any integer as a port: the socket layer overflows or wraps it later.
    ({"HTTPS_PROXY": "http://user:s3cret@127.0.0.1:99999999999999999999"}, "HTTPS_PROXY"),
    ({"HTTP_PROXY": "http://user:s3cret@[::1]:65536"}, "HTTP_PROXY"),
    ({"HTTP_PROXY": "http://127.0.0.1:-1"}, "HTTP_PROXY"),
    ({"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "[::1]:99999"}, "NO_PROXY"),
    ({"HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": "h:99999999999999999999"}, "NO_PROXY"),
    # Host names the resolver's IDNA codec refuses before any lookup (an empty label, one
    # over 63 characters): the socket layer raises UnicodeError, no network error.
    ({"HTTP_PROXY": "http://user:s3cret@proxy..corp:3128"}, "HTTP_PROXY"),
    ({"HTTP_PROXY": f"http://user:s3cret@{'p' * 64}.corp:3128"}, "HTTP_PROXY"),
    ({"ALL_PROXY": "http://user:s3cret@.proxy:3128"}, "ALL_PROXY"),
    # No host, or one that is neither a name nor an address (httpx keeps it percent-encoded
    # and would fail only once a request went out, as a name that does not resolve).
    ({"HTTPS_PROXY": "http://[bad"}, "HTTPS_PROXY"),
    ({"HTTPS_PROXY": "http://user:s3cret@[bad"}, "HTTPS_PROXY"),
    ({"HTTPS_PROXY": "http:///nohost"}, "HTTPS_PROXY"),
    ({"HTTP_PROXY": "http://user:s3cret@:3128"}, "HTTP_PROXY"),
    ({"http_proxy": "http://prox<y>:3128"}, "http_proxy"),
    ({"HTTPS_PROXY": "http://host:notaport"}, "HTTPS_PROXY"),
    # A '/', '?' or '#' in the password ends the authority there: the parser's own words
    # would quote the password as a port.
    ({"HTTPS_PROXY": "http://user:s3cret#1@proxy:3128"}, "HTTPS_PROXY"),
    ({"HTTPS_PROXY": "http://user:s3cret/1@proxy:3128"}, "HTTPS_PROXY"),
    ({"HTTP_PROXY": "http://user:s3cret?1@proxy:3128"}, "HTTP_PROXY"),
]


@pytest.mark.parametrize(("variables", "named"), _UNUSABLE, ids=[v for _, v in _UNUSABLE])
@pytest.mark.parametrize("command", ["info", "install"])
def test_an_unusable_proxy_setting_is_one_line_naming_it(
    tmp_path: Path, variables: dict[str, str], named: str, command: str
) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), NEXO_GITHUB_API_BASE="http://127.0.0.1:9")
    env.update(variables)
    args = ("acme/hello", "--yes") if command == "install" else ("acme/hello",)
    result = nexo("plugin", command, *args, env=env, in_process=True)
    assert result.code == 2, result.stderr
    (line,) = without_notes(result.stderr).splitlines()
    assert line.startswith(f"error: {named} "), line
    assert "s3cret" not in result.stderr
    as_json = nexo("plugin", command, *args, "--json", env=env, in_process=True)
    assert as_json.code == 2
    assert as_json.document["kind"] == "config"
    assert f"error: {as_json.document['error']} [config]" == line
    assert "s3cret" not in as_json.stdout + as_json.stderr
    assert not (tmp_path / "home" / "state").exists()


@pytest.mark.parametrize("value", ["http://[bad", "http:///nohost", "http://host:notaport"])
def test_a_malformed_proxy_is_refused_whatever_host_no_proxy_lists(
    tmp_path: Path, value: str
) -> None:
    """As httpx (``trust_env``) parses every proxy variable when its client is made, a
    ``NO_PROXY`` listing the host asked does not make a malformed proxy usable; ``NO_PROXY=*``
    turns every proxy off, and the proxy variable is then not read at all (the command goes
    on to the API, where nothing listens: ``network``)."""
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE="http://127.0.0.1:9",
        NEXO_HTTP_RETRY_BASE_MS="1",
        HTTPS_PROXY=value,
        NO_PROXY="127.0.0.1",
    )
    listed = nexo("plugin", "info", "acme/hello", "--json", env=env, in_process=True)
    assert (listed.code, listed.document["kind"]) == (2, "config"), listed.stdout
    assert listed.document["error"].startswith("HTTPS_PROXY "), listed.stdout
    env["NO_PROXY"] = "*"
    every = nexo("plugin", "info", "acme/hello", "--json", env=env, in_process=True)
    assert (every.code, every.document["kind"]) == (1, "network"), every.stdout
    assert "PROXY is not" not in every.document["error"]


PLUGINS = ("alpha", "bravo")


@pytest.fixture
def installed_and_locked(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """(the environment, the lock): two plugins installed from the GitHub stand-in and
    locked in ./nexo-plugins.lock; no proxy set yet. No request reaches the stand-in after."""
    with GitHubServer() as server:
        env = clean_env(
            NEXO_HOME=str(tmp_path / "home"),
            NEXO_GITHUB_API_BASE=server.url,
            NEXO_HTTP_RETRY_BASE_MS="1",
        )
        wanted = tmp_path / "nexo-plugins.toml"
        for plugin_id in PLUGINS:
            server.publish("acme", plugin_id, "v1.0.0", release_assets(plugin_id, "1.0.0"))
            installed = nexo("plugin", "install", f"acme/{plugin_id}", env=env, in_process=True)
            assert installed.code == 0, installed.stderr
        wanted.write_text(
            "".join(f'[plugins.{p}]\nsource = "acme/{p}"\n' for p in PLUGINS), encoding="utf-8"
        )
        locked = nexo("plugin", "lock", "-f", str(wanted), env=env, in_process=True)
        assert locked.code == 0, locked.stderr
        server.requests.clear()
        yield env, tmp_path / "nexo-plugins.lock"
        assert server.requests == []


_MALFORMED = {
    "http://[bad": "http://[bad",
    "http:///nohost": "http:///nohost",
    "http://host:notaport": "http://host:notaport",
    "http://user:s3cret#1@proxy:3128": "http://***@proxy:3128",
}


@pytest.mark.parametrize("value", _MALFORMED)
def test_a_malformed_proxy_stops_every_command_once_before_any_request(
    installed_and_locked: tuple[dict[str, str], Path], tmp_path: Path, value: str
) -> None:
    """Whatever the command, and however many plugins it would ask about: one line naming
    the variable (not one per plugin), exit 2, nothing asked and nothing written."""
    env, lock = installed_and_locked
    env = {**env, "HTTPS_PROXY": value}
    wanted = lock.with_suffix(".toml")
    commands = {
        "info": ["acme/alpha@v1.0.0"],
        "search": ["alpha"],
        "install": ["acme/alpha@v1.0.0", "--force", "--yes"],
        "upgrade": ["alpha"],
        "upgrade --all": ["--all"],
        "outdated": [],
        "lock": ["-f", str(wanted), "--upgrade"],
        "sync": ["--lock", str(lock), "--dest", str(tmp_path / "other-root")],
        "sync --frozen": ["--frozen", "--lock", str(lock), "--dest", str(tmp_path / "root-3")],
    }
    expected = f"HTTPS_PROXY is not a usable proxy URL ({_MALFORMED[value]}): "
    before = tree_snapshot(tmp_path)
    for command, arguments in commands.items():
        name = command.split()[0]
        result = nexo("plugin", name, *arguments, "--json", env=env, in_process=True)
        assert (result.code, result.document["kind"]) == (2, "config"), (command, result.stdout)
        error = result.document["error"]
        assert error.startswith(expected), (command, error)
        (line,) = without_notes(result.stderr).splitlines()
        assert line == f"error: {error} [config]", (command, result.stderr)
        assert "s3cret" not in result.stdout + result.stderr
        text = nexo("plugin", name, *arguments, env=env, in_process=True)
        assert text.code == 2, (command, text.stderr)
        assert without_notes(text.stderr).splitlines() == [line], (command, text.stderr)
        assert tree_snapshot(tmp_path) == before, command


def test_a_bracketed_ipv6_no_proxy_entry_with_a_port_is_reached_directly(
    proxy: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexo_pkg.net.client import proxy_mounts

    assert proxy_mounts({"http": "p:1", "no": "[::1]:8080"}) == {
        "http://": "http://p:1",
        "all://[::1]:8080": None,
    }
    for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("NO_PROXY", f"[::1]:8080,127.0.0.1:{proxy.port}")
    assert _get(proxy.url + "/direct") == b"through the proxy"


@pytest.mark.parametrize(
    "value", ["proxy.nexo-test.invalid:3128", "http://proxy.nexo-test.invalid"]
)
def test_a_proxy_whose_host_does_not_resolve_is_named_not_the_host_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """A typo in the proxy variable is the proxy's name that does not resolve: the error
    names it and the variable, never the GitHub host behind it (which the proxy would have
    resolved). The lookup fails here, for that name only, without asking any DNS server."""
    import socket

    real = socket.getaddrinfo

    def lookup(host: object, *args: object, **kwargs: object) -> object:
        if host == "proxy.nexo-test.invalid":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE="http://127.0.0.1:9",
        NEXO_HTTP_RETRY_BASE_MS="1",
        HTTP_PROXY=value,
    )
    for command in ("info", "install"):
        result = nexo("plugin", command, "acme/hello", "--json", env=env, in_process=True)
        assert (result.code, result.document["kind"]) == (1, "network"), result.stdout
        error = result.document["error"]
        assert "'proxy.nexo-test.invalid'" in error, error
        assert "HTTP_PROXY" in error, error
        assert "127.0.0.1" not in error, error


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_a_proxy_that_refuses_the_connection_is_named_not_only_the_host_asked(
    tmp_path: Path, scheme: str
) -> None:
    """A proxy the variable names that takes no connection: the line names the proxy and the
    variable, not the host asked alone as if it had refused (the client never connected to
    it), in the words of a refused connection, without the errno number."""
    import socket

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]  # closed below: nothing listens there any more
    variable = f"{scheme.upper()}_PROXY"
    env = clean_env(
        NEXO_HOME=str(tmp_path / "home"),
        NEXO_GITHUB_API_BASE=f"{scheme}://api.nexo-test.invalid",
        NEXO_HTTP_RETRY_BASE_MS="1",
        **{variable: f"http://user:secret@127.0.0.1:{port}"},
    )
    result = nexo("plugin", "install", "acme/hello", "--json", env=env, in_process=True)
    assert (result.code, result.document["kind"]) == (1, "network"), result.stdout
    error = result.document["error"]
    assert (
        f"cannot connect to 'api.nexo-test.invalid' through the proxy '127.0.0.1:{port}' "
        f"{variable} names (Connection refused)"
    ) in error, error
    assert "secret" not in error, error
    assert "Errno" not in error, error
    lines = without_notes(result.stderr).splitlines()
    assert lines == [f"error: {error} [network]"], result.stderr
