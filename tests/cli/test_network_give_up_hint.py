"""A host that never answers ends the command, once the retries are spent, with one line
naming what to check; the proxy variable it names is the one httpx reads for the scheme of
the request that failed (``HTTP_PROXY`` for plain http, ``HTTPS_PROXY`` for https), so a
person behind a proxy looks at the setting that mattered."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from support.cli import TRACEBACK, clean_env, nexo
from support.tarballs import tree_snapshot


def _closed_port() -> int:
    """A loopback port nothing listens on: every connection to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(("scheme", "variable"), [("http", "HTTP_PROXY"), ("https", "HTTPS_PROXY")])
def test_the_give_up_line_names_the_proxy_variable_of_the_failed_scheme(
    tmp_path: Path, scheme: str, variable: str
) -> None:
    host = f"127.0.0.1:{_closed_port()}"
    api = f"{scheme}://{host}"
    env = clean_env(NEXO_HOME=str(tmp_path / "home"), HOME=str(tmp_path),
                    NEXO_HTTP_RETRY_BASE_MS="1")  # fmt: skip
    dest = tmp_path / "plugins"
    args = ["plugin", "install", "acme/hello", "--github-api-url", api, "--dest", str(dest)]
    before = tree_snapshot(tmp_path)
    text = nexo(*args, "--yes", env=env, cwd=tmp_path, in_process=True)
    as_json = nexo(*args, "--yes", "--json", env=env, cwd=tmp_path, in_process=True)
    assert TRACEBACK not in text.stderr + as_json.stderr
    assert (text.code, as_json.code) == (1, 1), (text.stderr, as_json.stderr)
    document = as_json.document
    assert (document["ok"], document["kind"]) == (False, "network"), document
    assert document["error"].endswith(
        f"(gave up after 4 attempts); check the network, proxy settings ({variable}) and "
        "the GitHub API URL"
    ), document
    assert text.stdout == ""
    [line] = [each for each in text.stderr.splitlines() if each.startswith("error: ")]
    assert line == f"error: {document['error']} [network]"
    assert line.startswith(f"error: latest release of acme/hello: cannot connect to '{host}'")
    assert tree_snapshot(tmp_path) == before
