"""Signatures as OCI 1.1 referrers: through the referrers API (a loopback proxy gives the real
registry the API it lacks) and through the ``sha256-<hex>`` tag fallback (the registry as it
is), with the same verdicts either way."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import nexo
from support.registry import Registry
from support.registry_proxy import RegistryProxy

from .conftest import ACME_IDENTITY, MakeDist, push_dist

MALLORY = "https://github.com/mallory/x/.github/workflows/r.yml@refs/tags/v1"


@pytest.fixture
def proxy(registry: Registry) -> Iterator[RegistryProxy]:
    running = RegistryProxy(registry.host, referrers_api=True).start()
    yield running
    running.stop()


def _fallback_tags(registry: Registry) -> int:
    """Requests to the registry for a ``sha256-<hex>`` tag, any method."""
    return registry.requests(r"[A-Z]+", r"/manifests/sha256-")


def _verdicts(
    tmp_path: Path, env: dict[str, str], base: str, make_dist: MakeDist, policy: Path
) -> dict[str, tuple[str, str | None]]:
    """Push a version signed by acme, one signed by mallory and one unsigned under ``base``,
    then install each with --require-signature: ``{case: (kind or "verified", identity)}``."""
    home = Path(env["NEXO_HOME"])
    cases = {"acme": ACME_IDENTITY, "mallory": MALLORY, "unsigned": None}
    verdicts: dict[str, tuple[str, str | None]] = {}
    for name, identity in cases.items():
        dist = make_dist(f"p_{name}", identity=identity)
        push_dist(dist, f"{base}/{name}", home)
        dest = tmp_path / f"root-{name}"
        result = nexo(
            "plugin",
            "install",
            f"{base}/{name}:1.2.3",
            "--dest",
            str(dest),
            "--plain-http",
            "--trusted-keys",
            str(policy),
            "--require-signature",
            "--yes",
            "--json",
            env=env,
            in_process=True,
        )
        document = result.document
        if result.code == 0:
            verdicts[name] = ("verified", document["signature"]["identity"])
        else:
            assert not (dest / f"p_{name}-1.2.3").exists()
            verdicts[name] = (document["kind"], None)
    return verdicts


EXPECTED = {
    "acme": ("verified", ACME_IDENTITY),
    "mallory": ("signer_untrusted", None),
    "unsigned": ("signature_missing", None),
}


def test_the_referrers_api_and_the_tag_fallback_give_the_same_verdicts(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    proxy: RegistryProxy,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    # Through the API: the push learns from OCI-Subject that no fallback tag is needed, and
    # the readers list the signatures with the API alone.
    through_api = _verdicts(tmp_path / "api", fleet_env, proxy.ref("api"), make_dist, policy)
    assert through_api == EXPECTED
    assert registry.requests("PUT", r"/manifests/sha256-") == 0
    # Only the unsigned version, whose API listing is empty, has its fallback tag looked up.
    assert _fallback_tags(registry) == 1
    assert proxy.count("GET", "/referrers/sha256:", 200) >= 3
    assert len(proxy.referrers) == 4  # two targets each of acme and mallory

    # The registry as it is (no API): the fallback tag is written and read.
    direct = _verdicts(tmp_path / "tag", fleet_env, registry.ref("tag"), make_dist, policy)
    assert direct == EXPECTED
    assert registry.requests("PUT", r"/manifests/sha256-") == 4
    assert registry.requests("GET", r"/referrers/") >= 3  # asked first, answered 404


def test_artifacts_pushed_before_the_registry_had_the_api_still_verify(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    proxy: RegistryProxy,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """Pushed with the tag fallback, read through an API that lists nothing for them (as a
    registry upgraded in place may): the fallback tag is still consulted."""
    push_dist(make_dist(), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    dest = tmp_path / "root"
    result = nexo(
        "plugin",
        "install",
        proxy.ref("plugins/echo:1.2.3"),
        "--dest",
        str(dest),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--require-signature",
        "--yes",
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert result.code == 0, result.stderr
    assert result.document["signature"]["identity"] == ACME_IDENTITY
    assert proxy.count("GET", "/referrers/", 200) == 1
    assert proxy.count("GET", "/manifests/sha256-", 200) == 1


def test_referrers_on_later_pages_are_found(
    *,
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    policy: Path,
) -> None:
    """One referrer a page, another artifact type (an SBOM) first: the signature is on the
    second page, behind the ``Link`` header."""
    paged = RegistryProxy(
        registry.host, referrers_api=True, page_size=1, foreign_referrers=True
    ).start()
    try:
        push_dist(make_dist(), paged.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
        dest = tmp_path / "root"
        result = nexo(
            "plugin",
            "install",
            paged.ref("plugins/echo:1.2.3"),
            "--dest",
            str(dest),
            "--plain-http",
            "--trusted-keys",
            str(policy),
            "--require-signature",
            "--yes",
            "--json",
            env=fleet_env,
            in_process=True,
        )
        assert result.code == 0, result.stderr
        assert result.document["signature"]["identity"] == ACME_IDENTITY
        assert paged.count("GET", "/referrers/", 200) == 2
        assert _fallback_tags(registry) == 0
    finally:
        paged.stop()
