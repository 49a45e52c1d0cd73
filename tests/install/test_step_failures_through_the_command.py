"""Each step of the install pipeline failing, through the console script (SPEC §5): resolve,
pick the asset, download, checksum, signature, archive inspection, payload checks, the install
root and the place the plugin goes. Every failure exits 1 (2 for a usage error), ends stderr
with one ``error: … [KIND]`` line whose kind and message are the ``--json`` document's, and
leaves ``NEXO_HOME`` (download cache included) and the install root byte-for-byte as they were:
no staging directory, no temp file, no blob of a refused download.

The ``in-process`` tests of :mod:`tests.install.test_pipeline` hold the kinds step by step;
these hold what the operator sees of them, in a root that already holds a plugin.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.github_server import GitHubServer, github_server
from support.stderr import without_notes
from support.tarballs import (
    asset_name,
    file,
    manifest_text,
    plugin_members,
    plugin_tarball,
    release_assets,
    sidecar_line,
    targz,
    tree_snapshot,
)

__all__ = ["github_server"]

TARBALL = asset_name("echo", "0.1.0")


@dataclass(frozen=True)
class Step:
    """A release (or a workspace change) that makes one step fail, and the failure."""

    args: tuple[str, ...]
    kind: str
    code: int = 1
    publish: Callable[[GitHubServer], None] | None = None
    prepare: Callable[[Path], None] | None = None


def _release(**overrides: object) -> Callable[[GitHubServer], None]:
    def publish(server: GitHubServer) -> None:
        assets = release_assets("echo", "0.1.0", **overrides)  # type: ignore[arg-type]
        server.publish("acme", "echo", "v0.1.0", assets)

    return publish


def _wrong_sidecar(server: GitHubServer) -> None:
    assets = release_assets("echo", "0.1.0")
    assets[f"{TARBALL}.sha256"] = sidecar_line(b"another archive", TARBALL).encode()
    server.publish("acme", "echo", "v0.1.0", assets)


def _wrong_digest(server: GitHubServer) -> None:
    server.publish(
        "acme",
        "echo",
        "v0.1.0",
        release_assets("echo", "0.1.0"),
        digests={TARBALL: "sha256:" + "0" * 64},
    )


def _bogus_bundle(server: GitHubServer) -> None:
    assets = release_assets("echo", "0.1.0")
    assets[f"{TARBALL}.sigstore.json"] = b'{"not": "a bundle"}'
    server.publish("acme", "echo", "v0.1.0", assets)


def _faulty(fault: Callable[[GitHubServer], object]) -> Callable[[GitHubServer], None]:
    def publish(server: GitHubServer) -> None:
        _release()(server)
        fault(server)

    return publish


def _dest_is_a_file(root: Path) -> None:
    shutil.rmtree(root / "dest")
    (root / "dest").write_text("not a root\n", encoding="utf-8")


def _cache_is_a_file(root: Path) -> None:
    shutil.rmtree(root / "home" / "cache", ignore_errors=True)
    (root / "home" / "cache").write_text("not a cache\n", encoding="utf-8")


def _place_is_taken(root: Path) -> None:
    (root / "dest" / "echo-0.1.0").write_text("not a plugin\n", encoding="utf-8")


INSTALL = ("install", "acme/echo", "--yes")
UNSAFE = targz([*plugin_members("echo", "0.1.0"), file("../escaped", "x")])
MISNAMED = plugin_tarball("echo", "0.1.0", manifest=manifest_text("echo", "0.2.0"))
UNPARSABLE = plugin_tarball("echo", "0.1.0", manifest="not toml [[[")
NO_LAUNCHER = targz(m for m in plugin_members("echo", "0.1.0") if not m.name.startswith("bin"))

RATE_LIMITED = _faulty(lambda server: server.rate_limit(times=None))
ANSWERS_500 = _faulty(lambda server: server.fail(500, times=None))
CUT_SHORT = _faulty(lambda server: server.truncate_body(times=None, path_contains="/assets/"))
DROPPED = _faulty(lambda server: server.drop_connection(times=None, path_contains="/assets/"))

STEPS = {
    "source": Step(("install", "acme/../echo", "--yes"), "source_invalid", 2),
    "usage": Step((*INSTALL, "--require-signature", "--skip-signature-verify"), "usage", 2),
    "resolve-no-release": Step(
        ("install", "acme/echo@v9.9.9", "--yes"), "release_not_found", publish=_release()
    ),
    "resolve-rate-limited": Step(INSTALL, "rate_limited", publish=RATE_LIMITED),
    "resolve-5xx": Step(INSTALL, "network", publish=ANSWERS_500),
    "pick": Step(INSTALL, "asset_not_found", publish=_release(target="x86_64-pc-windows-msvc")),
    "download-truncated": Step(INSTALL, "network", publish=CUT_SHORT),
    "download-dropped": Step(INSTALL, "network", publish=DROPPED),
    "download-cache": Step(INSTALL, "io", publish=_release(), prepare=_cache_is_a_file),
    "checksum-missing": Step(INSTALL, "checksum_missing", publish=_release(sidecar=False)),
    "checksum-sidecar": Step(INSTALL, "checksum_mismatch", publish=_wrong_sidecar),
    "checksum-digest": Step(INSTALL, "checksum_mismatch", publish=_wrong_digest),
    "signature-required": Step(
        (*INSTALL, "--require-signature"), "signature_missing", publish=_release()
    ),
    "signature-bogus": Step(INSTALL, "signature_invalid", publish=_bogus_bundle),
    "archive-invalid": Step(INSTALL, "archive_invalid", publish=_release(data=b"no gzip")),
    "archive-unsafe": Step(INSTALL, "archive_unsafe", publish=_release(data=UNSAFE)),
    "payload-manifest": Step(
        INSTALL, "manifest_invalid", publish=_release(data=UNPARSABLE, manifest_asset=False)
    ),
    "payload-mismatch": Step(INSTALL, "manifest_mismatch", publish=_release(data=MISNAMED)),
    "payload-launcher": Step(INSTALL, "archive_invalid", publish=_release(data=NO_LAUNCHER)),
    "root-is-a-file": Step(INSTALL, "usage", 2, publish=_release(), prepare=_dest_is_a_file),
    "place-is-taken": Step(
        INSTALL, "already_installed", publish=_release(), prepare=_place_is_taken
    ),
}


@pytest.fixture(scope="module")
def installed_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A NEXO_HOME and an install root holding ``keeper`` 1.0.0, installed by the command."""
    root = tmp_path_factory.mktemp("template")
    data = plugin_tarball("keeper", "1.0.0")
    tarball = root / "incoming" / asset_name("keeper", "1.0.0")
    tarball.parent.mkdir()
    tarball.write_bytes(data)
    tarball.with_name(f"{tarball.name}.sha256").write_text(sidecar_line(data, tarball.name))
    env = clean_env(NEXO_HOME=str(root / "home"))
    done = nexo("plugin", "install", tarball, "--dest", root / "dest", "--yes", env=env)
    assert done.exit_code == 0, done.stderr
    return root


def _run(
    root: Path, server: GitHubServer, args: tuple[str, ...], *, json_output: bool
) -> CliResult:
    env = clean_env(
        NEXO_HOME=str(root / "home"),
        NEXO_GITHUB_API_BASE=server.url,
        NEXO_HTTP_RETRY_BASE_MS="1",
        NO_PROXY="127.0.0.1,localhost",
        GH_CONFIG_DIR=str(root / "gh-config"),
    )
    extra = ("--json",) if json_output else ()
    return nexo("plugin", *args, "--dest", root / "dest", *extra, env=env, cwd=root)


def _workspace(template: Path, into: Path, step: Step) -> tuple[Path, dict[str, object]]:
    root = into / "ws"
    shutil.copytree(template, root, symlinks=True)
    if step.prepare is not None:
        step.prepare(root)
    return root, _state(root)


def _state(root: Path) -> dict[str, object]:
    """Every byte, mode and link of ``NEXO_HOME`` and of ``--dest`` (a directory or a file)."""
    dest = root / "dest"
    return {
        "home": tree_snapshot(root / "home"),
        "dest": tree_snapshot(dest) if dest.is_dir() else dest.read_bytes(),
    }


@pytest.mark.parametrize("name", sorted(STEPS))
def test_a_failing_step_is_one_line_of_its_kind_and_changes_nothing(
    name: str, tmp_path: Path, installed_root: Path, github_server: GitHubServer
) -> None:
    step = STEPS[name]
    if step.publish is not None:
        step.publish(github_server)
    lines = {}
    for json_output in (False, True):
        root, before = _workspace(installed_root, tmp_path / str(json_output), step)
        result = _run(root, github_server, step.args, json_output=json_output)
        assert result.exit_code == step.code, (result.exit_code, result.stdout, result.stderr)
        # The error is the last line on stderr, one line, ending with its kind.
        last = without_notes(result.stderr).splitlines()[-1]
        assert last.startswith("error: "), result.stderr
        assert last.endswith(f" [{step.kind}]"), result.stderr
        assert [line for line in result.stderr.splitlines() if line.startswith("error")] == [last]
        lines[json_output] = last.replace(str(root), "ROOT")
        if json_output:
            document = result.document
            assert document["ok"] is False
            assert document["kind"] == step.kind, document
            assert last == f"error: {document['error']} [{step.kind}]"
        else:
            assert result.stdout == "", result.stdout
        # Nothing written, nothing lost: the root, the cache and its temp dir as they were.
        assert _state(root) == before, name
    # The same words whether or not --json is given.
    assert lines[False] == lines[True]
