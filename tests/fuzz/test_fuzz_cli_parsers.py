"""Property: whatever source, reference or URL the CLI is handed, by its user or by a registry,
it ends in a result or in one error line with its kind, never a traceback.

Sources and ``oci://`` references go to ``install`` and to a wanted set for ``lock``; a real
registry (behind a loopback proxy) answers with generated Bearer realms, ``Link`` headers and
upload ``Location`` headers. Every network attempt goes to a closed loopback port (the
proxy variables point there), so nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.cli import CliResult, nexo
from support.registry import Registry, start_registry
from support.registry_proxy import RegistryProxy
from support.tarballs import manifest_text, plugin_tarball, write_plugin

from .strategies import install_sources

CLOSED = "http://127.0.0.1:9"
FUZZ = settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
OCI_PIECES = (
    "oci://",
    "127.0.0.1:9",
    "[::1]",
    "[1::2::3]",
    "[::::]",
    "[",
    "]",
    ":",
    "/",
    "@",
    "sha256:",
    "sha512:",
    "a" * 64,
    "plugins",
    "echo",
    ":1.0.0",
    "..",
    "%2e",
    " ",
    "\x00",
    "\u202e",
    "\x1b[31m",
    "?",
    "#",
    "localhost:99999",
    "-",
    "__",
    "A",
)
URL_PIECES = (
    "http://",
    "https://",
    "//",
    "/v2/",
    "[::1",
    "[::1]",
    "127.0.0.1:9",
    "@",
    "user:pw@",
    "%00",
    "?",
    "#",
    ";",
    ",",
    '"',
    "<",
    ">",
    " ",
    "\t",
    "realm=",
    'realm="',
    "Bearer ",
    "Basic ",
    "service=",
    "scope=",
    'rel="next"',
    "javascript:",
    "file:///etc/passwd",
    "\u00e9",
    "\x7f",
    ":",
    "99999",
    "..",
    "plugins/echo/tags/list",
)
# What an HTTP header value can carry: latin-1, no CR or LF.
HEADER_TEXT = st.text(
    alphabet=st.characters(max_codepoint=255, blacklist_characters="\r\n"), max_size=80
)


def _header_values() -> st.SearchStrategy[str]:
    return st.one_of(st.lists(st.sampled_from(URL_PIECES), max_size=8).map("".join), HEADER_TEXT)


def _env(home: Path) -> dict[str, str]:
    return {
        "NEXO_HOME": str(home),
        "NEXO_GITHUB_API_BASE": CLOSED,
        "HTTPS_PROXY": CLOSED,
        "HTTP_PROXY": CLOSED,
        "ALL_PROXY": CLOSED,
        "NO_PROXY": "127.0.0.1",
        "NEXO_HTTP_RETRY_BASE_MS": "1",
        "NEXO_HTTP_TIMEOUT": "20",
        "DOCKER_CONFIG": str(home / "no-docker"),
        "NO_COLOR": "1",
    }


def _one_line(result: CliResult) -> None:
    """A result, or one error line on stderr with a JSON document naming its kind."""
    assert "Traceback" not in result.stderr
    assert result.exit_code in {0, 1, 2}, (result.exit_code, result.stderr)
    document = json.loads(result.stdout)
    assert isinstance(document, dict)
    if result.exit_code != 0:
        assert isinstance(document.get("kind"), str), document
        assert document["kind"] != "internal", result.stderr  # a bug's line, not an answer
        errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1, result.stderr


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, RegistryProxy]]:
    """A real registry holding echo 1.0.0, and a proxy in front of it for the fuzzed headers."""
    directory = tmp_path_factory.mktemp("fuzz-registry")
    running = start_registry(directory / "registry")
    proxy = RegistryProxy(running.host).start()
    from nexo_pkg.fleet.publish import push
    from nexo_pkg.fleet.sources import FleetOptions
    from nexo_pkg.install.options import InstallOptions

    dist = directory / "dist"
    write_plugin(dist, "echo", "1.0.0")
    (dist / "nexo-plugin.toml").write_text(manifest_text("echo", "1.0.0"))
    choices = InstallOptions(dest=directory / "plugins", nexo_home=directory, plain_http=True)
    push(dist, running.ref("plugins/echo"), FleetOptions(choices))
    yield running, proxy
    proxy.stop()
    running.stop()


@FUZZ
@given(
    st.one_of(
        install_sources(),
        st.lists(st.sampled_from(OCI_PIECES), min_size=1, max_size=8).map("".join),
        st.text(max_size=40).map("oci://".__add__),
    )
)
def test_install_and_lock_of_any_source_end_in_one_line(tmp_path: Path, source: str) -> None:
    if "\x00" in source or source.startswith("-"):
        return  # an argument vector cannot hold NUL; a leading '-' is an option to Click
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # one directory per example
    env = _env(tmp_path / "home")
    dest = tmp_path / "root"
    _one_line(
        nexo(
            "plugin",
            "install",
            source,
            "--dest",
            str(dest),
            "--plain-http",
            "--yes",
            "--json",
            env=env,
            in_process=True,
        )
    )
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f"[plugins.echo]\nsource = {json.dumps(source)}\n", encoding="utf-8")
    _one_line(nexo("plugin", "lock", "-f", str(wanted), "--json", env=env, in_process=True))


@FUZZ
@given(_header_values(), st.sampled_from(["challenge", "link", "location"]))
def test_any_realm_link_or_location_a_registry_sends_ends_in_one_line(
    tmp_path: Path, served: tuple[Registry, RegistryProxy], value: str, header: str
) -> None:
    _, proxy = served
    tmp_path = Path(tempfile.mkdtemp(dir=tmp_path))  # one directory per example
    env = _env(tmp_path / "home")
    if header == "challenge":
        proxy.challenge = f'Bearer realm="{value}",service="x"' if value[:1] != "B" else value
    else:
        setattr(proxy, header, value if header == "location" else f'<{value}>; rel="next"')
    try:
        if header == "location":
            dist = tmp_path / "dist"
            # New bytes each time, so the push uploads (and meets the Location).
            data = plugin_tarball("echo", "1.0.1", payload=os.urandom(16))
            write_plugin(dist, "echo", "1.0.1", data=data)
            args = [
                "plugin",
                "push",
                str(dist),
                proxy.ref("plugins/echo"),
                "--plain-http",
                "--json",
            ]
        else:
            args = [
                "plugin",
                "install",
                proxy.ref("plugins/echo"),
                "--dest",
                str(tmp_path / "root"),
                "--plain-http",
                "--yes",
                "--json",
            ]
        _one_line(nexo(*args, env=env, in_process=True))
    finally:
        proxy.challenge = proxy.link = proxy.location = ""
