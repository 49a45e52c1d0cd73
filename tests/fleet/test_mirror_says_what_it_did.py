"""``nexo plugin mirror`` without ``--json`` says in one line what it did, for each of its two
ways: a registry version copied as it is (what was copied: blobs, manifests, tags), and a
GitHub release built into a registry artifact (the release and the pinned result)."""

from __future__ import annotations

import re
from pathlib import Path

from support.cli import nexo
from support.github_server import GitHubServer, github_server
from support.registry import Registry
from support.tarballs import release_assets

from .conftest import LINUX, MakeDist, push_dist

__all__ = ["github_server"]
DIGEST = r"sha256:[0-9a-f]{64}"


def test_a_registry_copy_counts_what_it_copied(
    fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    push_dist(make_dist(identity=None), registry.ref("plugins/echo"), Path(fleet_env["NEXO_HOME"]))
    source, destination = registry.ref("plugins/echo:1.2.3"), registry.ref("copy/echo")
    done = nexo("plugin", "mirror", source, destination, "--plain-http", env=fleet_env,
                in_process=True)  # fmt: skip
    assert done.code == 0, done.stderr
    said = done.stdout + done.stderr
    pattern = (
        rf"Mirrored {re.escape(source)} to {re.escape(destination)}:1\.2\.3 \({DIGEST}\): "
        r"\d+ blob\(s\), \d+ manifest\(s\), 1 tag\(s\) copied\.\n"
    )
    assert re.fullmatch(pattern, said), said


def test_a_release_mirror_names_the_release(
    fleet_env: dict[str, str], registry: Registry, github_server: GitHubServer
) -> None:
    github_server.publish(
        "acme", "nexo-plugin-echo", "v1.2.3", release_assets("echo", "1.2.3", target=LINUX)
    )
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    destination = registry.ref("site/echo")
    done = nexo("plugin", "mirror", "acme/nexo-plugin-echo@v1.2.3", destination, "--plain-http",
                env=env, in_process=True)  # fmt: skip
    assert done.code == 0, done.stderr
    said = done.stdout + done.stderr
    pattern = (
        rf"Mirrored acme/nexo-plugin-echo@v1\.2\.3 to {re.escape(destination)}:1\.2\.3 "
        rf"\({DIGEST}\)\.\n"
    )
    assert re.fullmatch(pattern, said), said


def test_a_release_mirror_reads_a_tag_as_install_does(
    fleet_env: dict[str, str], registry: Registry, github_server: GitHubServer
) -> None:
    """``@1.2.3`` mirrors the release tagged ``v1.2.3``; a tag with no release is
    ``release_not_found`` naming the nearest tags, and the registry gets nothing."""
    github_server.publish(
        "acme", "nexo-plugin-echo", "v1.2.3", release_assets("echo", "1.2.3", target=LINUX)
    )
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    missing = registry.ref("site/missing")
    refused = nexo("plugin", "mirror", "acme/nexo-plugin-echo@v1.2.4", missing, "--plain-http",
                   env=env, in_process=True)  # fmt: skip
    assert refused.code == 1
    assert refused.stderr.endswith(
        "acme/nexo-plugin-echo has no release tagged 'v1.2.4'; nearest tags: v1.2.3"
        " [release_not_found]\n"
    ), refused.stderr
    assert registry.requests("(PUT|POST|PATCH)", r".") == 0  # the registry got nothing
    destination = registry.ref("site/echo")
    done = nexo("plugin", "mirror", "acme/nexo-plugin-echo@1.2.3", destination, "--plain-http",
                env=env, in_process=True)  # fmt: skip
    assert done.code == 0, done.stderr
    assert f"Mirrored acme/nexo-plugin-echo@1.2.3 to {destination}:1.2.3 " in done.stderr


def test_a_release_mirror_takes_the_download_limit_its_refusal_names(
    fleet_env: dict[str, str], registry: Registry, github_server: GitHubServer
) -> None:
    """A release asset past the download limit is refused naming --max-download-size, which
    ``mirror`` takes: the registry gets nothing; raised, the copy goes through."""
    github_server.publish(
        "acme", "nexo-plugin-echo", "v1.2.3", release_assets("echo", "1.2.3", target=LINUX)
    )
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": github_server.url}
    destination = registry.ref("site/echo")
    refused = nexo("plugin", "mirror", "acme/nexo-plugin-echo@v1.2.3", destination,
                   "--plain-http", "--max-download-size", "100", env=env,
                   in_process=True)  # fmt: skip
    assert refused.code == 1, refused.stderr
    assert refused.stderr.endswith("--max-download-size) [archive_unsafe]\n"), refused.stderr
    assert registry.requests("(PUT|POST|PATCH)", r".") == 0
    done = nexo("plugin", "mirror", "acme/nexo-plugin-echo@v1.2.3", destination, "--plain-http",
                "--max-download-size", "10M", env=env, in_process=True)  # fmt: skip
    assert done.code == 0, done.stderr
