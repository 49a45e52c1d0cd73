"""A spent rate limit is its service's: GitHub's stops every later GitHub lookup of the
command, a registry's only the lookups of that registry, not those of another host."""

from __future__ import annotations

from nexo_pkg.core.errors import NexoError
from nexo_pkg.sources.api import Prefetched, first_per_service, stopped_in_order

A1 = {"type": "oci", "registry": "oci://registry-a.example/plugins/echo@sha256:" + "1" * 64}
A2 = {"type": "oci", "registry": "oci://REGISTRY-A.example/plugins/weather@sha256:" + "2" * 64}
B1 = {"type": "oci", "registry": "oci://registry-b.example:5000/plugins/slack@sha256:" + "3" * 64}
G1 = {"type": "github", "owner": "acme", "repo": "echo", "tag": "v1.0.0"}
G2 = {"type": "github", "owner": "other", "repo": "weather", "tag": "v2.0.0"}


def _limited(host: str) -> NexoError:
    return NexoError(f"{host} refuses more requests for now", kind="rate_limited")


def test_a_registry_s_limit_stops_that_registry_only() -> None:
    known = Prefetched()
    first = _limited("registry-a.example")
    assert known.stop(A1, first) is first
    assert known.stopped_for(A2) is first  # the same host, whatever its case
    assert known.stopped_for(B1) is None
    assert known.stopped_for(G1) is None


def test_github_s_limit_stops_every_github_lookup() -> None:
    known = Prefetched()
    first = _limited("api.github.com")
    known.stop(G1, first)
    assert known.stopped_for(G2) is first
    assert known.stopped_for(A1) is None


def test_a_report_names_each_registry_s_first_answer() -> None:
    a, b, a_again = _limited("a"), _limited("b"), _limited("a again")
    assert first_per_service([(A1, a), (B1, b), (A2, a_again)]) == [a, b, a]
    ended = stopped_in_order([(A1, a), (B1, None), (A2, None), (G1, None)])
    assert ended == [a, None, a, None]
