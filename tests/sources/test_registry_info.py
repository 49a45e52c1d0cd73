"""``nexo plugin info oci://…`` shows every target the registry version ships, and checks the
one this host would install exactly as install does, against the real registry."""

from __future__ import annotations

import hashlib
from pathlib import Path

from support.cli import nexo
from support.registry import Registry

from .conftest import ACME_IDENTITY, LINUX, MakeDist


def test_info_of_a_registry_version_lists_every_target(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist, policy: Path
) -> None:
    dist = make_dist(targets=("noarch", LINUX, "aarch64-apple-darwin"))
    pushed = nexo(
        "plugin",
        "push",
        str(dist),
        registry.ref("plugins/echo"),
        "--plain-http",
        env=fleet_env,
        in_process=True,
    )
    assert pushed.code == 0, pushed.stderr
    shown = nexo(
        "plugin",
        "info",
        registry.ref("plugins/echo:1.2.3"),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        "--json",
        env=fleet_env,
        in_process=True,
    )
    assert shown.code == 0, shown.stderr
    document = shown.document
    assert sorted((t["target"], t["asset"]) for t in document["targets"]) == sorted(
        (target, f"echo-1.2.3-{target}.tar.gz")
        for target in ("noarch", LINUX, "aarch64-apple-darwin")
    )
    assert (document["host_target"], document["asset"]) == (LINUX, f"echo-1.2.3-{LINUX}.tar.gz")
    # The plugin id, version, checksum and min_nexo_version, as for a GitHub release.
    assert (document["id"], document["version"], document["min_nexo_version"]) == (
        "echo",
        "1.2.3",
        ">=0.1.0",
    )
    tarball = (dist / f"echo-1.2.3-{LINUX}.tar.gz").read_bytes()
    assert document["sha256"] == hashlib.sha256(tarball).hexdigest()
    assert (document["signature"]["status"], document["signature"]["identity"]) == (
        "verified",
        ACME_IDENTITY,
    )
    text = nexo(
        "plugin",
        "info",
        registry.ref("plugins/echo:1.2.3"),
        "--plain-http",
        "--trusted-keys",
        str(policy),
        env=fleet_env,
        in_process=True,
    )
    assert text.code == 0, text.stderr
    [targets_line] = [line for line in text.stdout.splitlines() if line.startswith("Targets:")]
    assert all(target in targets_line for target in ("noarch", LINUX, "aarch64-apple-darwin"))
    assert "Plugin:     echo 1.2.3\n" in text.stdout
    assert f"sha256:     {document['sha256']}\n" in text.stdout
    assert f"Signer:     {ACME_IDENTITY} (verified)\n" in text.stdout
    assert "min_nexo:   >=0.1.0\n" in text.stdout
    assert not (Path(fleet_env["NEXO_HOME"]) / "state" / "plugins").exists()


def test_info_of_a_registry_repository_names_its_tags(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """A registry has no releases: its tags are what an operator picks from. ``info`` names
    the tag of the version it shows (the highest semver tag without one asked for) and every
    version tag of the repository, highest first."""
    for version in ("1.0.0", "1.2.3", "1.10.0"):
        dist = make_dist("echo", version, identity=None, targets=(LINUX,))
        pushed = nexo(
            "plugin", "push", str(dist), registry.ref("plugins/echo"), "--plain-http",
            env=fleet_env, in_process=True,
        )  # fmt: skip
        assert pushed.code == 0, pushed.stderr
    for reference, version in (("plugins/echo", "1.10.0"), ("plugins/echo:1.2.3", "1.2.3")):
        shown = nexo(
            "plugin", "info", registry.ref(reference), "--plain-http", "--json",
            env=fleet_env, in_process=True,
        )  # fmt: skip
        assert shown.code == 0, shown.stderr
        assert (shown.document["version"], shown.document["tag"]) == (version, version)
        assert shown.document["tags"] == ["1.10.0", "1.2.3", "1.0.0"]
        text = nexo(
            "plugin", "info", registry.ref(reference), "--plain-http",
            env=fleet_env, in_process=True,
        )  # fmt: skip
        assert f"Release:    {version}\n" in text.stdout
        assert "Tags:       1.10.0, 1.2.3, 1.0.0\n" in text.stdout
