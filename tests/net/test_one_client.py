"""Every network user goes through the one HTTP client of ``nexo_pkg/net``: nothing else in
the package builds an httpx client or transport or speaks ``http.client`` itself."""

from __future__ import annotations

import re
from pathlib import Path

import nexo_pkg

PACKAGE = Path(nexo_pkg.__file__).resolve().parent
# What opening a connection of one's own looks like, however it is imported.
OWN_STACK = re.compile(
    r"httpx\.(?:Client|AsyncClient|HTTPTransport|AsyncHTTPTransport)\b"
    r"|\bhttp\.client\b|\bhttpcore\b|\burllib\.request\b|\burlopen\b"
    r"|from\s+httpx\s+import\s+[^\n]*\b(?:Client|HTTPTransport)\b"
)


def test_only_net_opens_connections() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "net"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OWN_STACK.search(line)
    ]
    assert offenders == []


def test_the_pattern_finds_what_it_looks_for() -> None:
    """The grep above is not vacuous: it sees the net room's own client and transport."""
    client = (PACKAGE / "net" / "client.py").read_text(encoding="utf-8")
    transport = (PACKAGE / "net" / "transport.py").read_text(encoding="utf-8")
    assert OWN_STACK.search(client)
    assert OWN_STACK.search(transport)
    assert OWN_STACK.search("self._http = httpx.Client(follow_redirects=True)")
