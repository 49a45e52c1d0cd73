"""A real OCI registry for tests: Debian's ``docker-registry`` (CNCF distribution 2.8).

:func:`start_registry` runs the binary on 127.0.0.1 with a temp storage directory and a
config file (optionally htpasswd basic auth), and waits until ``/v2/`` answers. Its access
log goes to a file so tests can count requests (``blob_gets``). The fixtures
:func:`registry` and :func:`auth_registry` skip with a clear message when the binary is not
installed, except under CI (``CI=true``), where a missing registry is a failure:
``scripts/test.sh`` installs it there.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.token_server import ISSUER, SERVICE, TokenServer

BINARY_NAMES = ("docker-registry", "registry")
USER, PASSWORD = "fleet", "s3cret-fleet"


def registry_binary() -> str | None:
    for name in BINARY_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Registry:
    """A running registry: ``host`` is ``127.0.0.1:PORT``; ``storage`` its blob store."""

    host: str
    storage: Path
    log: Path
    process: subprocess.Popen[bytes]
    auth_file: Path | None = None

    def ref(self, path: str) -> str:
        return f"oci://{self.host}/{path}"

    def requests(self, method: str, path_pattern: str) -> int:
        """How many access-log lines show ``method`` on a path matching ``path_pattern``."""
        text = self.log.read_text(encoding="utf-8", errors="replace")
        pattern = re.compile(rf'"{method} (/v2/\S*) HTTP/1\.1" (\d+)')
        return sum(1 for match in pattern.finditer(text) if re.search(path_pattern, match.group(1)))

    def blob_gets(self) -> int:
        return self.requests("GET", r"/blobs/sha256:")

    def all_requests(self) -> int:
        return self.requests(r"[A-Z]+", r".")

    def blob_files(self) -> list[Path]:
        """The ``data`` files of every stored blob (to tamper with in tests)."""
        return sorted(self.storage.rglob("blobs/sha256/*/*/data"))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _htpasswd(path: Path) -> None:
    tool = shutil.which("htpasswd")
    if tool is None:
        pytest.skip("htpasswd (apache2-utils) is not installed; scripts/test.sh installs it in CI")
    line = subprocess.run(
        [tool, "-Bbn", USER, PASSWORD], capture_output=True, text=True, check=True
    ).stdout.strip()
    path.write_text(line + "\n", encoding="utf-8")


def start_registry(
    directory: Path,
    *,
    basic_auth: bool = False,
    token: TokenServer | None = None,
    tls: tuple[Path, Path] | None = None,
) -> Registry:
    """Start distribution on a free loopback port; fail or skip as the module says. With
    ``tls`` (a certificate and its key) it answers HTTPS only."""
    binary = registry_binary()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("docker-registry is not installed (scripts/test.sh installs it)")
        pytest.skip(
            "docker-registry (CNCF distribution) is not installed: "
            "apt-get install docker-registry, or run scripts/test.sh as root with CI=true"
        )
    directory.mkdir(parents=True, exist_ok=True)
    storage = directory / "storage"
    storage.mkdir(exist_ok=True)
    port = _free_port()
    auth = ""
    auth_file = None
    if basic_auth:
        auth_file = directory / "htpasswd"
        _htpasswd(auth_file)
        auth = f"auth:\n  htpasswd:\n    realm: nexo-test\n    path: {auth_file}\n"
    if token is not None:
        auth = (
            f"auth:\n  token:\n    realm: {token.realm}\n    service: {SERVICE}\n"
            f"    issuer: {ISSUER}\n    rootcertbundle: {token.root_bundle}\n"
        )
    config = directory / "config.yml"
    config.write_text(
        "version: 0.1\n"
        "log:\n  level: warn\n  accesslog:\n    disabled: false\n"
        f"storage:\n  filesystem:\n    rootdirectory: {storage}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
        + (f"  tls:\n    certificate: {tls[0]}\n    key: {tls[1]}\n" if tls else "")
        + auth,
        encoding="utf-8",
    )
    log = directory / "registry.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [binary, "serve", str(config)], stdout=sink, stderr=subprocess.STDOUT
        )
    registry = Registry(f"127.0.0.1:{port}", storage, log, process, auth_file)
    deadline = time.monotonic() + 15
    scheme = "https" if tls else "http"
    context = ssl.create_default_context(cafile=str(tls[0])) if tls else None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"docker-registry exited: {log.read_text(errors='replace')}")
        try:
            with urllib.request.urlopen(
                f"{scheme}://{registry.host}/v2/", timeout=1, context=context
            ):
                return registry
        except urllib.error.HTTPError as error:
            if error.code == 401:
                return registry
        except OSError:
            time.sleep(0.05)
    registry.stop()
    raise RuntimeError("docker-registry did not answer within 15 s")


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Registry]:
    """An anonymous registry on 127.0.0.1, stopped after the test."""
    running = start_registry(tmp_path / "registry")
    yield running
    running.stop()


@pytest.fixture
def auth_registry(tmp_path: Path) -> Iterator[Registry]:
    """A registry that wants htpasswd basic auth (user :data:`USER`)."""
    running = start_registry(tmp_path / "auth-registry", basic_auth=True)
    yield running
    running.stop()


@pytest.fixture
def token_registry(tmp_path: Path) -> Iterator[tuple[Registry, TokenServer]]:
    """A registry that wants bearer tokens from a loopback token service (user :data:`USER`)."""
    (tmp_path / "token").mkdir()
    service = TokenServer(USER, PASSWORD, tmp_path / "token")
    service.start()
    running = start_registry(tmp_path / "token-registry", token=service)
    yield running, service
    running.stop()
    service.stop()
