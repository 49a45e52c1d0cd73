"""The GitHub stand-in keeps a kept-alive connection in step: a request it answers without
routing (a fault, a refused GraphQL query) still has its body read, so the connection's next
request is read from where it starts, as GitHub's servers do."""

from __future__ import annotations

import http.client
import json

import pytest

from .github_server import GitHubServer

QUERY = json.dumps({"query": "query { viewer { login } }", "variables": {}}).encode()


def _post_then_get(server: GitHubServer, headers: dict[str, str]) -> tuple[int, int]:
    """Status of a POST /graphql carrying a body, then of a GET on the same connection."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request("POST", "/graphql", body=QUERY, headers=headers)
        first = connection.getresponse()
        first.read()
        connection.request("GET", "/repos/acme/none/releases/latest")
        second = connection.getresponse()
        second.read()
        return first.status, second.status
    finally:
        connection.close()


def test_a_graphql_query_without_a_token_leaves_the_connection_usable() -> None:
    with GitHubServer() as server:
        assert _post_then_get(server, {}) == (401, 404)
    assert [r.method for r in server.requests] == ["POST", "GET"]


@pytest.mark.parametrize("fault", ["rate_limit", "status"])
def test_a_fault_answering_a_post_leaves_the_connection_usable(fault: str) -> None:
    with GitHubServer() as server:
        if fault == "rate_limit":
            server.rate_limit(times=1, path_contains="/graphql")
        else:
            server.fail(500, times=1, path_contains="/graphql")
        headers = {"Authorization": "Bearer t"}
        assert _post_then_get(server, headers) == ((403 if fault == "rate_limit" else 500), 404)
