"""A hostile OCI registry (or its token service) answers ``install oci://`` and ``lock``: with a
gzip bomb, a manifest nested too deeply, or headers and a body dripped one byte at a time.
Every case ends in one line with its kind (and one JSON document), in bounded time and
memory; nothing is installed and nothing lands in the blob cache."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.stderr import without_notes

from nexo_pkg.sources.artifact import ARTIFACT_TYPE, EMPTY_DATA, EMPTY_MEDIA_TYPE, LAYER_MEDIA_TYPE

from .hostile import GIB, gzip_bomb
from .server import FaultyGitHubServer
from .workspace import run_measured

MIB = 1024 * 1024
REPOSITORY = "plugins/echo"
MANIFEST_PATH = f"/v2/{REPOSITORY}/manifests/1.2.3"
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
EMPTY_DIGEST = "sha256:" + hashlib.sha256(EMPTY_DATA).hexdigest()


class HostileRegistry(FaultyGitHubServer):
    """The loopback fault server answering registry paths with whatever a test sets, so the
    faults of :class:`FaultyGitHubServer` (dripped headers, throttled bodies) apply to them."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: dict[str, tuple[int, bytes, str, dict[str, str]]] = {}

    def answer(
        self,
        path: str,
        body: bytes,
        *,
        status: int = 200,
        content_type: str = INDEX_MEDIA_TYPE,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.answers[path] = (status, body, content_type, dict(headers or {}))

    def route(
        self, handler: BaseHTTPRequestHandler, path: str, headers: dict[str, str]
    ) -> tuple[int, bytes, str, dict[str, str]]:
        if path in self.answers:
            return self.answers[path]
        return 404, b'{"errors": [{"code": "MANIFEST_UNKNOWN"}]}', "application/json", {}


@dataclass
class Workspace:
    server: HostileRegistry
    home: Path
    dest: Path
    tmp: Path

    @property
    def source(self) -> str:
        return f"oci://127.0.0.1:{self.server.port}/{REPOSITORY}:1.2.3"

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(
            NEXO_HOME=str(self.home),
            NEXO_HTTP_RETRY_BASE_MS="1",
            NO_PROXY="127.0.0.1,localhost",
            DOCKER_CONFIG=str(self.tmp / "no-docker-config"),
            **extra,
        )

    def install_args(self, *extra: str) -> list[str]:
        return [
            "plugin", "install", self.source, "--plain-http", "--dest", str(self.dest),
            "--yes", "--json", *extra,
        ]  # fmt: skip

    def assert_refused(self, result: CliResult, kind: str) -> None:
        assert result.exit_code == 1, (result.stdout, result.stderr)
        assert "Traceback" not in result.stderr, result.stderr
        assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr
        assert result.document["kind"] == kind, result.document
        # Nothing installed, nothing cached.
        assert not self.dest.exists() or not [
            p for p in self.dest.iterdir() if not p.name.startswith(".")
        ]
        blobs = self.home / "cache" / "blobs" / "sha256"
        assert not blobs.exists() or not list(blobs.iterdir())


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    server = HostileRegistry()
    server.start()
    try:
        yield Workspace(server, tmp_path / "home", tmp_path / "plugins", tmp_path)
    finally:
        server.stop()


def _nested(depth: int = 100_000) -> bytes:
    """An index whose ``manifests`` are ``depth`` arrays deep."""
    return (
        b'{"schemaVersion": 2, "mediaType": "' + INDEX_MEDIA_TYPE.encode() + b'", "manifests": '
        + b"[" * depth + b"]" * depth + b"}"
    )  # fmt: skip


# -- size caps, before and after content decoding ---------------------------------------------


def test_a_gzip_bomb_manifest_is_refused_in_bounded_memory(workspace: Workspace) -> None:
    bomb = gzip_bomb(GIB)
    workspace.server.answer(MANIFEST_PATH, bomb, headers={"Content-Encoding": "gzip"})
    _assert_refused_in_bounded_memory(workspace, "MiB")


def test_a_gzip_bomb_token_answer_is_refused_in_bounded_memory(workspace: Workspace) -> None:
    realm = f"{workspace.server.url}/token"
    challenge = f'Bearer realm="{realm}",service="hostile",scope="repository:{REPOSITORY}:pull"'
    workspace.server.answer(
        MANIFEST_PATH, b"{}", status=401, headers={"WWW-Authenticate": challenge}
    )
    workspace.server.answer(
        "/token", gzip_bomb(GIB), content_type="application/json",
        headers={"Content-Encoding": "gzip"},
    )  # fmt: skip
    _assert_refused_in_bounded_memory(workspace, "token service")


def _assert_refused_in_bounded_memory(workspace: Workspace, detail: str) -> None:
    # A client that inflates the whole answer (or a whole 1 MiB piece of it) at once needs
    # far more address space than this.
    measured, elapsed = run_measured(
        workspace.install_args(), env=workspace.env(), address_space_limit=GIB
    )
    workspace.assert_refused(measured.result, "registry_invalid")
    assert detail in measured.result.document["error"]
    assert measured.peak_rss_bytes < 200 * MIB, measured.peak_rss_bytes
    assert elapsed < 30


# -- rate limits ------------------------------------------------------------------------------


@pytest.mark.parametrize(("headers", "wait"), [({"Retry-After": "3600"}, 3600), ({}, None)])
def test_a_registry_that_keeps_answering_429_is_rate_limited_not_a_network_error(
    workspace: Workspace, headers: dict[str, str], wait: int | None
) -> None:
    """A pull limit (Docker Hub's ``toomanyrequests``) after the retries: ``rate_limited``,
    saying when to ask again, not the network advice a dead registry gets."""
    body = b'{"errors": [{"code": "TOOMANYREQUESTS", "message": "pull rate limit"}]}'
    workspace.server.answer(
        MANIFEST_PATH, body, status=429, content_type="application/json", headers=headers
    )
    # A wait the request's deadline cannot hold is not waited: the answer comes at once.
    result = nexo(*workspace.install_args(), env=workspace.env(NEXO_HTTP_TIMEOUT="20"))
    workspace.assert_refused(result, "rate_limited")
    message = result.document["error"]
    assert f"127.0.0.1:{workspace.server.port} refuses more requests for now" in message
    assert "check the network" not in message
    assert (f"wait {wait} s" in message) == (wait is not None), message
    assert result.document.get("retry_after_seconds") == wait


# -- nesting ----------------------------------------------------------------------------------


def test_a_deeply_nested_manifest_is_one_line_not_a_traceback(workspace: Workspace) -> None:
    workspace.server.answer(MANIFEST_PATH, _nested())
    result = nexo(*workspace.install_args(), env=workspace.env())
    workspace.assert_refused(result, "registry_invalid")
    assert "nested too deeply" in result.document["error"]


def test_a_deeply_nested_tag_list_is_one_line_not_a_traceback(workspace: Workspace) -> None:
    """``lock`` with a version requirement lists the tags: the same parser, the same bound."""
    workspace.server.answer(
        f"/v2/{REPOSITORY}/tags/list", b'{"name": "x", "tags": ' + b"[" * 100_000 + b"]" * 100_000
        + b"}", content_type="application/json",
    )  # fmt: skip
    wanted = workspace.tmp / "nexo-plugins.toml"
    wanted.write_text(
        f'[plugins.echo]\nsource = "oci://127.0.0.1:{workspace.server.port}/{REPOSITORY}"\n'
        'version = "^1"\n',
        encoding="utf-8",
    )
    result = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", "--json", env=workspace.env()
    )
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    document = result.document
    assert "nested too deeply" in json.dumps(document), document
    assert "registry_invalid" in json.dumps(document), document
    assert not (workspace.tmp / "nexo-plugins.lock").exists()


# -- the total deadline -----------------------------------------------------------------------


def test_dripped_manifest_headers_end_at_the_timeout_flag(workspace: Workspace) -> None:
    # 600 header bytes, one every 50 ms: 30 s, with no silence long enough for a read timeout.
    workspace.server.drip_headers("/manifests/", 0.05)
    started = time.monotonic()
    result = nexo(*workspace.install_args("--timeout", "2"), env=workspace.env())
    elapsed = time.monotonic() - started
    workspace.assert_refused(result, "network")
    assert "the 2 s deadline" in result.document["error"]
    assert elapsed < 15


def test_a_dripped_manifest_body_ends_at_nexo_http_timeout(workspace: Workspace) -> None:
    # 3 KB at 100 bytes a second: 30 s of a body that never stalls.
    workspace.server.answer(MANIFEST_PATH, b" " * 3000 + b"{}")
    workspace.server.throttle("/manifests/", 100)
    started = time.monotonic()
    result = nexo(*workspace.install_args(), env=workspace.env(NEXO_HTTP_TIMEOUT="2"))
    elapsed = time.monotonic() - started
    workspace.assert_refused(result, "network")
    assert "deadline" in result.document["error"]
    assert elapsed < 15


def test_lock_takes_the_timeout_flag_for_a_dripping_registry(workspace: Workspace) -> None:
    workspace.server.drip_headers("/manifests/", 0.05)
    wanted = workspace.tmp / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{workspace.source}"\n', encoding="utf-8")
    started = time.monotonic()
    result = nexo(
        "plugin",
        "lock",
        "-f",
        str(wanted),
        "--plain-http",
        "--timeout",
        "2",
        "--json",
        env=workspace.env(),
    )
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert "deadline" in json.dumps(result.document), result.document
    assert elapsed < 15
    assert not (workspace.tmp / "nexo-plugins.lock").exists()


@pytest.mark.parametrize("command", ["lock", "sync", "push", "mirror"])
def test_a_bad_timeout_is_a_usage_error(workspace: Workspace, command: str) -> None:
    args = {
        "lock": ["-f", str(workspace.tmp / "nexo-plugins.toml")],
        "sync": ["--lock", str(workspace.tmp / "x.lock"), "--dest", str(workspace.dest)],
        "push": [str(workspace.tmp), workspace.source],
        "mirror": ["acme/echo@v1", workspace.source],
    }[command]
    (workspace.tmp / "nexo-plugins.toml").write_text("", encoding="utf-8")
    (workspace.tmp / "x.lock").write_text("", encoding="utf-8")
    result = nexo(
        "plugin", command, *args, "--plain-http", "--timeout", "0", "--json", env=workspace.env()
    )
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert result.document["kind"] == "usage"
    assert "--timeout" in result.document["error"]


# -- what reaches the terminal ----------------------------------------------------------------

ESCAPES = "\x1b[2J\x1b[31mowned\x1b[0m\x1b]0;title\x07\r\nerror: a forged line"


def _index(version: str, entries: list[dict[str, object]]) -> bytes:
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "artifactType": "application/vnd.nexo.plugin.v1",
            "manifests": entries,
            "annotations": {"dev.nexo.plugin.id": "echo", "dev.nexo.plugin.version": version},
        }
    ).encode()


def _assert_one_clean_line(result: CliResult) -> None:
    """Exit 1, no traceback, and stderr free of raw control characters: the hostile text is
    there, escaped (``\\u001b`` or ``\\x1b``), on the one line it was meant for."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    assert not any(ord(char) < 0x20 and char != "\n" for char in result.stderr), result.stderr
    assert "\\u001b" in result.stderr or "\\x1b" in result.stderr, result.stderr
    assert "\nerror: a forged line" not in result.stderr, result.stderr


def test_a_registry_error_body_with_escape_sequences_is_escaped(workspace: Workspace) -> None:
    body = json.dumps({"errors": [{"code": "DENIED"}]}).encode()[:-1] + ESCAPES.encode() + b"}"
    workspace.server.answer(MANIFEST_PATH, body, status=500, content_type="application/json")
    result = nexo(*workspace.install_args()[:-1], env=workspace.env())
    _assert_one_clean_line(result)
    assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr


def test_an_annotation_with_escape_sequences_is_escaped_when_locking(
    workspace: Workspace,
) -> None:
    workspace.server.answer(MANIFEST_PATH, _index("1.2.3" + ESCAPES, []))
    wanted = workspace.tmp / "nexo-plugins.toml"
    wanted.write_text(
        f'[plugins.echo]\nsource = "{workspace.source}"\nversion = "^1"\n', encoding="utf-8"
    )
    result = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=workspace.env())
    _assert_one_clean_line(result)
    assert not (workspace.tmp / "nexo-plugins.lock").exists()


def test_sync_reports_a_hostile_registry_answer_on_escaped_lines(workspace: Workspace) -> None:
    """A lock naming the registry: the per-plugin failure line of ``sync`` carries the
    registry's error body escaped. (A hostile field of the lock itself never gets this far:
    it is refused, escaped, when the lock is read.)"""
    manifest = "sha256:" + "1" * 64
    workspace.server.answer(
        f"/v2/{REPOSITORY}/manifests/{manifest}",
        ESCAPES.encode(),
        status=502,
        content_type="text/plain",
    )
    lock = workspace.tmp / "nexo-plugins.lock"
    base = f"oci://127.0.0.1:{workspace.server.port}/{REPOSITORY}"
    lock.write_text(
        "lock_version = 1\n\n[plugins.echo]\n"
        f'source = "{base}"\nrequirement = "*"\nversion = "1.2.3"\n'
        f'resolved = "{base}@sha256:{"2" * 64}"\n\n'
        "[plugins.echo.targets.noarch]\n"
        f'asset = "echo-1.2.3-noarch.tar.gz"\nsize = 10\nsha256 = "{"3" * 64}"\n'
        f'manifest = "{manifest}"\n',
        encoding="utf-8",
    )
    dest = workspace.tmp / "root"
    result = nexo(
        "plugin",
        "sync",
        "--lock",
        str(lock),
        "--dest",
        str(dest),
        "--frozen",
        "--plain-http",
        env=workspace.env(),
    )
    _assert_one_clean_line(result)
    failure = [line for line in result.stderr.splitlines() if line.startswith("error: echo:")]
    assert len(failure) == 1, result.stderr
    assert failure[0].endswith("[network]"), failure
    assert not [p for p in dest.iterdir() if not p.name.startswith(".")]


def test_a_tag_list_whose_links_never_end_is_cut_off(workspace: Workspace) -> None:
    path = f"/v2/{REPOSITORY}/tags/list"
    workspace.server.answer(
        path,
        b'{"name": "plugins/echo", "tags": ["not-a-version"]}',
        content_type="application/json",
        headers={"Link": f'<{path}>; rel="next"'},
    )
    wanted = workspace.tmp / "nexo-plugins.toml"
    wanted.write_text(
        f'[plugins.echo]\nsource = "oci://127.0.0.1:{workspace.server.port}/{REPOSITORY}"\n',
        encoding="utf-8",
    )
    started = time.monotonic()
    result = nexo(
        "plugin", "lock", "-f", str(wanted), "--plain-http", "--json", env=workspace.env()
    )
    assert result.exit_code == 1, (result.stdout, result.stderr)
    assert result.document["kind"] == "registry_invalid", result.document
    assert "pages" in result.document["error"]
    assert time.monotonic() - started < 60
    assert not (workspace.tmp / "nexo-plugins.lock").exists()


# -- one byte a second: the token service and a blob ------------------------------------------


def test_a_token_answer_dripped_one_byte_a_second_ends_at_the_deadline(
    workspace: Workspace,
) -> None:
    """A token service that sends its (small) answer one byte a second, never silent long
    enough for a read timeout, is cut off at the command's deadline (`network`), in words."""
    realm = f"{workspace.server.url}/token"
    challenge = f'Bearer realm="{realm}",service="hostile",scope="repository:{REPOSITORY}:pull"'
    workspace.server.answer(
        MANIFEST_PATH, b"{}", status=401, headers={"WWW-Authenticate": challenge}
    )
    workspace.server.answer(
        "/token", b" " * 60 + b'{"token": "t"}', content_type="application/json"
    )
    workspace.server.throttle("/token", 1)
    started = time.monotonic()
    result = nexo(*workspace.install_args("--timeout", "3"), env=workspace.env())
    elapsed = time.monotonic() - started
    workspace.assert_refused(result, "network")
    assert "the 3 s deadline" in result.document["error"], result.document
    assert workspace.server.requests_to("/token")
    assert elapsed < 15


def test_a_blob_dripped_one_byte_a_second_ends_at_the_deadline(workspace: Workspace) -> None:
    """The plugin's tarball blob sent one byte a second is cut off at the command's deadline
    (`network`); nothing is installed and nothing lands in the blob cache."""
    blob = os.urandom(600)
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": ARTIFACT_TYPE,
        "config": {"mediaType": EMPTY_MEDIA_TYPE, "digest": EMPTY_DIGEST, "size": 2},
        "layers": [
            {
                "mediaType": LAYER_MEDIA_TYPE,
                "digest": digest,
                "size": len(blob),
                "annotations": {
                    "org.opencontainers.image.title": "echo-1.2.3-noarch.tar.gz",
                    "dev.nexo.plugin.id": "echo",
                    "dev.nexo.plugin.version": "1.2.3",
                    "dev.nexo.plugin.target": "noarch",
                    "dev.nexo.plugin.sha256": digest.removeprefix("sha256:"),
                },
            }
        ],
        "annotations": {"dev.nexo.plugin.id": "echo", "dev.nexo.plugin.version": "1.2.3"},
    }
    document = json.dumps(manifest).encode()
    by_digest = f"/v2/{REPOSITORY}/manifests/sha256:{hashlib.sha256(document).hexdigest()}"
    for path in (MANIFEST_PATH, by_digest):
        workspace.server.answer(
            path, document, content_type="application/vnd.oci.image.manifest.v1+json"
        )
    blob_path = f"/v2/{REPOSITORY}/blobs/{digest}"
    workspace.server.answer(blob_path, blob, content_type="application/octet-stream")
    workspace.server.throttle("/blobs/", 1)
    started = time.monotonic()
    result = nexo(*workspace.install_args("--timeout", "3"), env=workspace.env())
    elapsed = time.monotonic() - started
    workspace.assert_refused(result, "network")
    assert "the 3 s deadline" in result.document["error"], result.document
    assert workspace.server.requests_to(blob_path)
    assert elapsed < 15
