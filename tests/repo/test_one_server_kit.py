"""The tests serve HTTP through one kit, ``tests/support/http_kit.py`` (``LoopbackServer``):
no test module outside ``tests/support`` builds a server of its own from ``http.server`` or
``socketserver``. A test that needs a server off loopback passes ``host=`` to the kit.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SUPPORT = TESTS / "support"
#: The names that start a server of one's own (a request handler alone is fine: the kit's
#: ``fallback`` and ``handle`` hooks are given one).
_SERVERS = {"HTTPServer", "ThreadingHTTPServer"}


def _own_servers(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "socketserver"]
        elif isinstance(node, ast.ImportFrom) and node.module == "socketserver":
            found.append("socketserver")
        elif isinstance(node, ast.ImportFrom) and node.module == "http.server":
            found += [a.name for a in node.names if a.name in _SERVERS]
        elif isinstance(node, ast.Attribute) and node.attr in _SERVERS:
            found.append(node.attr)
    return found


def test_no_test_module_builds_its_own_http_server() -> None:
    offenders = {
        str(path.relative_to(TESTS)): names
        for path in sorted(TESTS.rglob("*.py"))
        if SUPPORT not in path.parents and "templates" not in path.parts
        for names in [_own_servers(path.read_text(encoding="utf-8"))]
        if names
    }
    assert offenders == {}


def test_the_check_finds_each_way_of_building_one() -> None:
    assert _own_servers("from http.server import ThreadingHTTPServer") == ["ThreadingHTTPServer"]
    assert _own_servers("import http.server\nhttp.server.HTTPServer(('', 0), H)") == ["HTTPServer"]
    assert _own_servers("import socketserver") == ["socketserver"]
    assert _own_servers("from http.server import BaseHTTPRequestHandler") == []
