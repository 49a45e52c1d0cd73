"""The questions a command asks a source, each kind against a real server: the loopback GitHub
stand-in, the real docker-registry, a real tarball on disk. ``newest`` (what upgrade, outdated
and info read), ``compatible`` (the newest version a daemon admits), ``matching`` (a lock's
requirement), ``every_target`` (what a lock pins), and re-opening a source from a receipt's
origin (:func:`~nexo_pkg.sources.api.reopen`) or a lock row
(:func:`~nexo_pkg.sources.api.locked_origin`), all through the route; and the questions the
route answers of a kind: what is read at once before many lookups
(:func:`~nexo_pkg.sources.api.prefetch_newest`), how an origin is named
(:func:`~nexo_pkg.sources.api.origin_label`), whether ``mirror`` copies a version as it is
(:func:`~nexo_pkg.sources.api.copies_as_is`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.github_server import GitHubServer, github_server
from support.registry import Registry
from support.tarballs import (
    manifest_text,
    plugin_tarball,
    release_assets,
    sha256_hex,
    write_plugin,
)

from nexo_pkg.core.errors import NexoError
from nexo_pkg.core.versionreq import parse_version_req
from nexo_pkg.install.api import Admitting, DaemonVersion, manifest_asset_problem
from nexo_pkg.sources.api import (
    NetworkChoices,
    Source,
    SourceContext,
    SourceRequest,
    check_remote,
    copies_as_is,
    locked_origin,
    open_source,
    origin_label,
    pins_upgrade,
    prefetch_newest,
    reopen,
    upgrades_from,
)
from nexo_pkg.trust.api import TrustPolicy

from .conftest import LINUX, push_dist

__all__ = ["github_server"]

TOKENS = ("NEXO_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN")

EVERY = SourceRequest(None, manifest_asset_problem)
BLOB_GET = r"/blobs/sha256:[0-9a-f]{64}$"
DAEMON = Admitting(DaemonVersion("0.2.1", "--nexo-version"))


def _manifest(version: str, needs: str) -> str:
    return manifest_text("hello", version).replace(">=0.1.0", needs)


def _release(server: GitHubServer, tag: str, version: str, needs: str, *, latest: bool) -> None:
    """``tag`` of acme/hello: hello ``version`` for noarch and Linux, with its manifest asset
    needing a daemon matching ``needs``."""
    text = _manifest(version, needs)
    assets: dict[str, bytes] = {}
    for target in ("noarch", LINUX):
        data = plugin_tarball("hello", version, manifest=text, payload=target.encode())
        assets.update(release_assets("hello", version, target=target, data=data))
    assets["nexo-plugin.toml"] = text.encode()
    server.publish("acme", "hello", tag, assets, digests=True, latest=latest)


def _releases(server: GitHubServer) -> None:
    _release(server, "v1.0.0", "1.0.0", ">=0.1.0", latest=True)
    _release(server, "v1.1.0", "1.1.0", ">=0.2.0", latest=True)
    _release(server, "v2.0.0", "2.0.0", ">=9.0", latest=True)


def _push(registry: Registry, home: Path, tmp_path: Path, version: str, needs: str) -> None:
    text = _manifest(version, needs)
    dist = tmp_path / f"dist-{version}"
    for target in ("noarch", LINUX):
        data = plugin_tarball("hello", version, manifest=text, payload=target.encode())
        write_plugin(dist, "hello", version, target=target, data=data)
    (dist / "nexo-plugin.toml").write_text(text)
    push_dist(dist, registry.ref("plugins/hello"), home)


def _versions(registry: Registry, home: Path, tmp_path: Path) -> None:
    _push(registry, home, tmp_path, "1.0.0", ">=0.1.0")
    _push(registry, home, tmp_path, "1.1.0", ">=0.2.0")
    _push(registry, home, tmp_path, "2.0.0", ">=9.0")


def _no_tarball_fetched(server: GitHubServer) -> bool:
    """Whether no request fetched a tarball (through the API or the download URL): the
    manifest assets and ``.sha256`` sidecars are all a question about versions reads."""
    for asset_id, (_, asset) in server.assets.items():
        if asset.name.endswith(".tar.gz") and any(
            r.path.endswith((f"/assets/{asset_id}", asset.name)) for r in server.requests
        ):
            return False
    return True


# -- GitHub releases ---------------------------------------------------------------------


def test_a_release_source_answers_newest_compatible_and_matching(
    tmp_path: Path, github_server: GitHubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _releases(github_server)
    network = NetworkChoices(github_api_url=github_server.url)
    with SourceContext(tmp_path / "home", network) as context:
        source = open_source("acme/hello", context, EVERY)
        newest = source.newest()
        assert (newest.plugin_id, newest.version, newest.tag, newest.label) == (
            "hello", "2.0.0", "v2.0.0", "v2.0.0",
        )  # fmt: skip
        assert newest.pinned == "acme/hello@v2.0.0"
        assert newest.said == "the latest release of acme/hello (v2.0.0) carries hello 2.0.0"
        assert newest.manifest == _manifest("2.0.0", ">=9.0")
        # The newest release a 0.2.1 daemon admits, from manifest assets alone.
        chosen = source.compatible(DAEMON, doing="locking")
        assert chosen is not None
        assert chosen.newest().version == "1.1.0"
        assert "locking v1.1.0, the newest release compatible with it" in capsys.readouterr().err
        # Newer than the installed version only: an upgrade from 1.1.0 has nowhere to go.
        assert source.compatible(DAEMON, above="1.1.0") is None
        # A tag names the version: nothing else is chosen.
        tagged = open_source("acme/hello@v2.0.0", context, EVERY)
        assert tagged.compatible(DAEMON) is None
        # A lock's requirement: the highest matching version, latest first.
        assert source.matching(parse_version_req("^1")).newest().version == "1.1.0"
        assert source.matching(parse_version_req("~1.0")).newest().version == "1.0.0"
        with pytest.raises(NexoError) as caught:
            source.matching(parse_version_req("^3"))
        assert caught.value.kind == "release_not_found"
        assert "nor does any release before it" in caught.value.message
        with pytest.raises(NexoError) as caught:
            tagged.matching(parse_version_req("^1"))
        assert caught.value.kind == "release_not_found"
        assert "nor does any release" not in caught.value.message
    assert _no_tarball_fetched(github_server)


def test_a_release_source_lists_every_target_with_what_the_release_vouches_for(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    _releases(github_server)
    network = NetworkChoices(github_api_url=github_server.url)
    with SourceContext(tmp_path / "home", network) as context:
        source = open_source("acme/hello@v1.1.0", context, EVERY)
        listed = source.every_target()
        vouched = source.every_target(vouched=True)
    assert [c.target for c in listed] == sorted(["noarch", LINUX])
    assert all(c.sha256 is None for c in listed)  # nothing but the release document is read
    release = github_server.releases[("acme", "hello")][1]
    expected = {a.name: sha256_hex(a.data) for a in release.assets}
    assert {c.asset_name: c.sha256 for c in vouched} == {
        name: digest for name, digest in expected.items() if name.endswith(".tar.gz")
    }
    assert _no_tarball_fetched(github_server)


def test_a_receipt_reopens_its_release_or_follows_its_repository(
    tmp_path: Path, github_server: GitHubServer
) -> None:
    _releases(github_server)
    origin = {"type": "github-releases", "owner": "acme", "repo": "hello", "tag": "v1.0.0"}
    network = NetworkChoices(github_api_url=github_server.url)
    with SourceContext(tmp_path / "home", network) as context:
        exact = reopen(origin, context, EVERY)
        followed = reopen(origin, context, EVERY, follow=True)
        assert exact is not None
        assert followed is not None
        assert exact.newest().version == "1.0.0"
        assert followed.newest().version == "2.0.0"
        # Another plugin than the one installed is refused.
        other = SourceRequest((), manifest_asset_problem, expected_id="weather")
        refusing = reopen(origin, context, other, follow=True)
        assert refusing is not None
        with pytest.raises(NexoError) as caught:
            refusing.newest()
        assert caught.value.kind == "asset_not_found"
        # A receipt without its repository cannot be asked again.
        assert reopen({"type": "github-releases", "owner": ""}, context, EVERY) is None


def _hello_and_weather(server: GitHubServer) -> list[dict[str, str]]:
    """acme/hello's releases and acme/weather's one; the origins of four receipts: two of
    acme/hello (at different tags), one of acme/weather, one without its repository."""
    _releases(server)
    server.publish("acme", "weather", "v0.3.0", release_assets("weather", "0.3.0"), digests=True)
    release = {"type": "github-releases", "owner": "acme"}
    return [
        {**release, "repo": "hello", "tag": "v1.0.0"},
        {**release, "repo": "hello", "tag": "v1.1.0"},
        {**release, "repo": "weather", "tag": "v0.3.0"},
        {**release, "owner": "", "repo": "", "tag": ""},
    ]


def _asked(server: GitHubServer) -> list[tuple[str, str]]:
    asked = sorted((r.method, r.path) for r in server.requests)
    server.requests.clear()
    return asked


def test_a_release_prefetch_reads_the_latest_releases_at_once(
    tmp_path: Path, github_server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a token, one GraphQL request reads the latest release of every repository, and
    the lookups that start from it ask GitHub for no release again."""
    for name in TOKENS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    origins = _hello_and_weather(github_server)
    github_server.requests.clear()
    network = NetworkChoices(github_api_url=github_server.url)
    with SourceContext(tmp_path / "home", network) as context:
        known = prefetch_newest(origins, context)
        assert _asked(github_server) == [("POST", "/graphql")]
        assert known.stopped == {}
        versions = []
        for origin in origins[:3]:
            source = reopen(origin, context, EVERY, follow=True, known=known)
            assert source is not None
            versions.append(source.newest().version)
        assert reopen(origins[3], context, EVERY, follow=True, known=known) is None
    assert versions == ["2.0.0", "2.0.0", "0.3.0"]
    asked = _asked(github_server)
    assert not [path for _, path in asked if "/releases/" in path and "/download/" not in path]
    assert _no_tarball_fetched(github_server)


def test_a_release_prefetch_without_a_token_reads_nothing_or_each_latest_release(
    tmp_path: Path, github_server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a token there is no batch: ``outdated`` reads nothing ahead, ``upgrade
    --all`` (``jobs``) reads each repository's latest release once, whatever the number of
    receipts naming it."""
    for name in TOKENS:
        monkeypatch.delenv(name, raising=False)
    origins = _hello_and_weather(github_server)
    github_server.requests.clear()
    network = NetworkChoices(github_api_url=github_server.url)
    with SourceContext(tmp_path / "home", network) as context:
        assert prefetch_newest(origins, context).found == {"github-releases": {}}
        assert _asked(github_server) == []
        known = prefetch_newest(origins, context, jobs=2)
        assert _asked(github_server) == [
            ("GET", "/repos/acme/hello/releases/latest"),
            ("GET", "/repos/acme/weather/releases/latest"),
        ]
        source = reopen(origins[2], context, EVERY, follow=True, known=known)
        assert source is not None
        assert source.newest().version == "0.3.0"
    assert not [path for _, path in _asked(github_server) if path.endswith("/releases/latest")]


def test_a_spent_rate_limit_stops_the_kind_it_came_from(
    tmp_path: Path, github_server: GitHubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A GraphQL answer that the rate limit is spent is no failure of the prefetch: it is
    what stops the lookups of that kind; a batch with ``jobs`` then reads nothing more."""
    for name in TOKENS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    origins = _hello_and_weather(github_server)
    github_server.rate_limit(status=403, reset=1_900_000_000, times=None)
    github_server.requests.clear()
    network = NetworkChoices(github_api_url=github_server.url)
    with SourceContext(tmp_path / "home", network) as context:
        known = prefetch_newest(origins, context, jobs=2)
    assert known.found == {}
    assert list(known.stopped) == ["github-releases"]
    assert known.stopped["github-releases"].kind == "rate_limited"
    assert _asked(github_server) == [("POST", "/graphql")]


@pytest.mark.parametrize("error_type", ["RATE_LIMITED", "RATE_LIMIT"])
def test_graphql_saying_its_limit_is_spent_leaves_the_lookups_to_rest(
    tmp_path: Path,
    github_server: GitHubServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    error_type: str,
) -> None:
    """GraphQL answers a spent rate limit with HTTP 200 and an ``errors`` entry of type
    ``RATE_LIMITED`` (github/docs#22607): no failure, since the REST API's limit is its own.
    It is said on the debug log with when it resets, no further GraphQL batch is asked, and
    each repository is read over REST as without a token."""
    from nexo_pkg.sources import releases

    for name in TOKENS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NEXO_GITHUB_TOKEN", "secret-token")
    monkeypatch.setattr(releases, "GRAPHQL_BATCH", 1)  # two batches: the second is not asked
    origins = _hello_and_weather(github_server)
    github_server.graphql_rate_limit(error_type=error_type, reset=1_900_000_000, times=None)
    github_server.requests.clear()
    network = NetworkChoices(github_api_url=github_server.url)
    with (
        caplog.at_level("DEBUG", logger="nexo_pkg.sources.github"),
        SourceContext(tmp_path / "home", network) as context,
    ):
        known = prefetch_newest(origins, context, jobs=2)
    assert known.stopped == {}
    found = known.found["github-releases"]
    assert {key: release.tag for key, release in found.items()} == {
        ("acme", "hello"): "v2.0.0",
        ("acme", "weather"): "v0.3.0",
    }
    assert _asked(github_server) == [
        ("GET", "/repos/acme/hello/releases/latest"),
        ("GET", "/repos/acme/weather/releases/latest"),
        ("POST", "/graphql"),
    ]
    (said,) = [record.getMessage() for record in caplog.records if "GraphQL" in record.getMessage()]
    assert "rate limit is spent" in said
    assert "it resets at 2030-03-17T17:46:40Z" in said
    assert "REST API" in said


def test_a_release_origin_is_named_by_its_repository() -> None:
    origin = {"type": "github-releases", "owner": "acme", "repo": "hello", "tag": "v1.0.0"}
    assert origin_label(origin) == "acme/hello"
    assert origin_label(origin, exact=True) == "acme/hello@v1.0.0"
    assert origin_label({**origin, "repo": ""}) == "origin unknown"
    assert not copies_as_is("acme/hello@v1.0.0")


# -- OCI registries ----------------------------------------------------------------------


def test_a_registry_source_answers_newest_compatible_and_matching(
    tmp_path: Path, registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    _versions(registry, home, tmp_path)
    repository = registry.ref("plugins/hello")
    with SourceContext(home, NetworkChoices(plain_http=True)) as context:
        source = open_source(repository, context, EVERY)
        newest = source.newest()
        assert (newest.plugin_id, newest.version, newest.tag) == ("hello", "2.0.0", None)
        assert newest.label.startswith("sha256:")
        assert newest.pinned == f"{repository}@{newest.label}"
        assert newest.said == f"the newest version in {repository} is 2.0.0"
        assert newest.manifest == _manifest("2.0.0", ">=9.0")
        chosen = source.compatible(DAEMON, doing="locking")
        assert chosen is not None
        assert chosen.newest().version == "1.1.0"
        assert "locking 1.1.0, the newest version compatible with it" in capsys.readouterr().err
        assert source.compatible(DAEMON, above="1.1.0") is None
        assert open_source(f"{repository}:2.0.0", context, EVERY).compatible(DAEMON) is None
        assert source.matching(parse_version_req("~1.0")).newest().version == "1.0.0"
        with pytest.raises(NexoError) as caught:
            source.matching(parse_version_req("^3")).newest()
        assert caught.value.kind == "release_not_found"
        layers = registry.requests("GET", BLOB_GET)
        every = source.every_target(vouched=True)
    assert sorted(c.target for c in every) == sorted(["noarch", LINUX])
    # The registry vouches for each layer in its target manifest: no layer is read for it.
    assert all(c.sha256 and c.manifest_digest and c.size for c in every)
    assert registry.requests("GET", BLOB_GET) == layers


def test_a_registry_receipt_reopens_its_digest_or_follows_its_repository(
    tmp_path: Path, registry: Registry
) -> None:
    home = tmp_path / "home"
    _versions(registry, home, tmp_path)
    with SourceContext(home, NetworkChoices(plain_http=True)) as context:
        first = open_source(registry.ref("plugins/hello:1.0.0"), context, EVERY).newest()
        origin = {"type": "oci-registry", "registry": first.pinned}
        exact = reopen(origin, context, EVERY)
        followed = reopen(origin, context, EVERY, follow=True)
        assert exact is not None
        assert followed is not None
        assert (exact.newest().version, exact.newest().label) == ("1.0.0", first.label)
        assert followed.newest().version == "2.0.0"
        other = SourceRequest((), manifest_asset_problem, expected_id="weather")
        refusing = reopen(origin, context, other, follow=True)
        assert refusing is not None
        with pytest.raises(NexoError) as caught:
            refusing.newest()
        assert caught.value.kind == "asset_not_found"
        assert "now holds plugin 'hello', not 'weather'" in caught.value.message
        assert reopen({"type": "oci-registry"}, context, EVERY) is None


def test_a_registry_prefetch_reads_nothing_and_its_origin_is_named_by_its_repository(
    tmp_path: Path, registry: Registry
) -> None:
    """Each registry lookup reads its repository's tags: nothing is read ahead of them, and
    no registry is asked for it. ``mirror`` copies a registry version as it is."""
    home = tmp_path / "home"
    _versions(registry, home, tmp_path)
    repository = registry.ref("plugins/hello")
    with SourceContext(home, NetworkChoices(plain_http=True)) as context:
        first = open_source(f"{repository}:1.0.0", context, EVERY).newest()
        origin = {"type": "oci-registry", "registry": first.pinned, "tag": "v1.0.0"}
        before = registry.all_requests()
        known = prefetch_newest([origin, {"type": "oci-registry"}], context, jobs=2)
        assert registry.all_requests() == before
        assert known.found == {}
        assert known.stopped == {}
        followed = reopen(origin, context, EVERY, follow=True, known=known)
        assert followed is not None
        assert followed.newest().version == "2.0.0"
    assert origin_label(origin) == repository
    assert origin_label(origin, exact=True) == first.pinned
    assert origin_label({"type": "oci-registry"}) == "origin unknown"
    assert copies_as_is(f"{repository}:1.0.0")
    assert copies_as_is(f"{repository}@{first.label}")


def test_a_lock_row_names_its_origin_by_the_kind_of_its_source(tmp_path: Path) -> None:
    policy = TrustPolicy()
    release = locked_origin(
        "acme/hello",
        "acme/hello@v1.1.0",
        asset_name="hello-1.1.0-noarch.tar.gz",
        manifest_digest=None,
        github=None,
        published="2026-11-20T10:00:00Z",
        policy=policy,
    )
    assert release.type == "github-releases"
    assert (release.owner, release.repo, release.tag) == ("acme", "hello", "v1.1.0")
    assert release.published == "2026-11-20T10:00:00Z"
    pinned = "oci://127.0.0.1:5000/plugins/hello@sha256:" + "a" * 64
    copy = locked_origin(
        "oci://127.0.0.1:5000/plugins/hello",
        pinned,
        asset_name="hello-1.1.0-noarch.tar.gz",
        manifest_digest="sha256:" + "b" * 64,
        github="acme/hello@v1.1.0",
        published=None,
        policy=policy,
    )
    assert copy.type == "oci-registry"
    assert copy.registry == pinned
    # A registry copy of a release is bound to that release's signer.
    assert (copy.owner, copy.repo, copy.tag) == ("acme", "hello", "v1.1.0")
    with pytest.raises(NexoError) as caught:
        locked_origin(
            "acme/hello",
            str(tmp_path / "hello-1.1.0-noarch.tar.gz"),
            asset_name="x",
            manifest_digest=None,
            github=None,
            published=None,
            policy=policy,
        )
    assert caught.value.kind in {"lock_invalid", "source_invalid"}


# -- local tarballs ----------------------------------------------------------------------


def test_a_local_tarball_is_what_it_is(tmp_path: Path) -> None:
    path = write_plugin(tmp_path / "dist", "hello", "1.0.0", target="noarch")
    with SourceContext(tmp_path / "home", NetworkChoices()) as context:
        source: Source = open_source(str(path), context, EVERY)
        newest = source.newest()
        assert (newest.plugin_id, newest.version, newest.tag) == ("hello", "1.0.0", None)
        assert newest.manifest is None
        assert source.compatible(DAEMON) is None
        assert source.matching(parse_version_req("^9")) is source
        assert [c.asset_name for c in source.every_target()] == [path.name]
        origin = {"type": "local-file", "path": str(path)}
        assert reopen(origin, context, EVERY) is None
        assert prefetch_newest([origin], context, jobs=2).found == {}
    assert origin_label(origin) == origin_label(origin, exact=True) == "local file"
    assert origin_label({"type": "no-such-kind"}) == "origin unknown"
    assert not copies_as_is(str(path))
    assert not upgrades_from(origin)
    assert upgrades_from({"type": "github-releases", "owner": "acme", "repo": "hello"})
    assert upgrades_from({"type": "oci-registry", "registry": "oci://127.0.0.1:1/p/hello"})
    assert upgrades_from({"type": "no-such-kind"})
    # A release's recorded tag and target bind its upgrade; a registry's tag is the release it
    # was mirrored from, and its upgrade takes the host's targets.
    assert pins_upgrade({"type": "github-releases", "owner": "acme", "repo": "hello"})
    assert not pins_upgrade({"type": "oci-registry", "registry": "oci://127.0.0.1:1/p/hello"})
    assert pins_upgrade({"type": "no-such-kind"})


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("acme/hello", None),
        ("acme/hello@v1.0.0", None),
        ("oci://127.0.0.1:5000/plugins/hello:1.0.0", None),
        ("oci://", "source_invalid"),
        ("./hello-1.0.0-noarch.tar.gz", "source_invalid"),
        ("acme", "source_invalid"),
    ],
)
def test_a_fleet_names_only_sources_it_can_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, kind: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    write_plugin(tmp_path, "hello", "1.0.0", target="noarch")
    if kind is None:
        check_remote(text)
        return
    with pytest.raises(NexoError) as caught:
        check_remote(text)
    assert caught.value.kind == kind
