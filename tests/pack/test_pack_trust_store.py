"""One trust store: ``pack`` vendors through pip, and pip verifies an https package index with
the same CA settings ``install``/``lock``/``sync`` use (tests/net/test_trust_store.py,
tests/faults/test_tls.py): the OS store, or the CAs ``SSL_CERT_FILE``/``SSL_CERT_DIR`` name.
A corporate CA given once works for both; without it the index is refused as ``network``.

Real parts: the ``nexo`` console script, real pip, a loopback https index (PEP 503) serving a
wheel of the test wheelhouse under a self-signed CA."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from support.cli import clean_env
from support.http_kit import Certificate, LoopbackServer, Reply, make_certificate

from pack.pack_helpers import ProjectFactory

# Settings of the test session or the machine that would let pip succeed without the index,
# or decide its CAs by other means than the ones under test.
_PIP_AND_CA = (
    "PIP_NO_INDEX",
    "PIP_FIND_LINKS",
    "PIP_INDEX_URL",
    "PIP_EXTRA_INDEX_URL",
    "PIP_CERT",
    "PIP_CONFIG_FILE",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)


def _index(wheelhouse: Path, certificate: Certificate) -> LoopbackServer:
    """An https PEP 503 index on loopback holding the wheelhouse's rfc8785 (no dependencies)."""
    wheels = sorted(wheelhouse.glob("rfc8785-*-py3-none-any.whl"))
    if not wheels:
        pytest.skip(f"no rfc8785 wheel in {wheelhouse}")
    wheel = wheels[-1]
    server = LoopbackServer()
    server.use_tls(certificate)
    page = f'<a href="/files/{wheel.name}">{wheel.name}</a>\n'.encode()
    server.add_route(
        "GET", "/simple/rfc8785/", lambda _: Reply(body=page, headers={"Content-Type": "text/html"})
    )
    server.add_route(
        "GET",
        f"/files/{wheel.name}",
        lambda _: Reply(body=wheel.read_bytes(), headers={"Content-Type": "application/zip"}),
    )
    return server


def _index_url(server: LoopbackServer) -> str:
    """The index by host name, as a real one is named: pip's truststore on Python 3.13 fails
    on an https address that is an IP (`check_hostname requires server_hostname`) before it
    looks at the certificate. The certificate holds both names."""
    return server.url.replace("https://127.0.0.1:", "https://localhost:", 1) + "/simple/"


def _pack(
    project: Path, out: Path, index: str, home: Path, retries: str = "0", **ca: str
) -> tuple[int, str]:
    env = {key: value for key, value in clean_env().items() if key not in _PIP_AND_CA}
    env.update(
        NEXO_HOME=str(home),
        HOME=str(home),
        PIP_CONFIG_FILE=os.devnull,
        PIP_INDEX_URL=index,
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_RETRIES=retries,
        NO_PROXY="127.0.0.1,localhost",
        SOURCE_DATE_EPOCH="1700000000",
        **ca,
    )
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("nexo")), "plugin", "pack", "--out", str(out)],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert "Traceback (most recent call last)" not in completed.stderr, completed.stderr
    return completed.returncode, completed.stderr


def _pack_with_ca_file(
    project: Path, out: Path, wheelhouse: Path, certificate: Certificate, tmp_path: Path
) -> tuple[int, str, LoopbackServer]:
    """``pack`` from the https index served under ``certificate``, with ``SSL_CERT_FILE``
    naming its CA (home ``tmp_path/home``); the stopped index keeps the requests it saw."""
    with _index(wheelhouse, certificate) as server:
        code, stderr = _pack(
            project,
            out,
            _index_url(server),
            tmp_path / "home",
            SSL_CERT_FILE=str(certificate.cert_file),
        )
    return code, stderr, server


def _vendored(out: Path) -> set[str]:
    (tarball,) = out.glob("*.tar.gz")
    with tarfile.open(tarball) as archive:
        return {name for name in archive.getnames() if name.startswith("lib/rfc8785/")}


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    directory = tmp_path / "ca"
    directory.mkdir()
    return make_certificate(directory)


@pytest.mark.parametrize("retries", ["0", "1"])
def test_an_https_index_under_an_untrusted_ca_is_refused_as_network_and_nothing_is_written(
    make_project: ProjectFactory,
    wheelhouse: Path,
    certificate: Certificate,
    tmp_path: Path,
    retries: str,
) -> None:
    """Whether pip retries (its default) or not (``PIP_RETRIES=0``, as CI often sets), the
    refusal is ``network`` and names the certificate, in pip's words without its log's time
    stamps; without retries pip's own closing lines say only "No matching distribution"."""
    project = make_project(requirements="rfc8785\n")
    out = tmp_path / "out"
    with _index(wheelhouse, certificate) as server:
        code, stderr = _pack(project, out, _index_url(server), tmp_path / "home", retries)
    assert code == 1, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert line.endswith(" [network]"), stderr
    assert "CERTIFICATE_VERIFY_FAILED" in line
    # The remedy names what makes a private CA trusted, not the network or the proxy.
    assert "SSL_CERT_FILE" in line, line
    assert "SSL_CERT_DIR" in line, line
    assert "HTTPS_PROXY" not in line, line
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", line), line
    assert not out.exists()
    assert not (project / "dist").exists()


def test_ssl_cert_file_names_the_ca_pip_trusts_when_pack_vendors(
    make_project: ProjectFactory, wheelhouse: Path, certificate: Certificate, tmp_path: Path
) -> None:
    project = make_project(requirements="rfc8785\n")
    out = tmp_path / "out"
    code, stderr, server = _pack_with_ca_file(project, out, wheelhouse, certificate, tmp_path)
    assert server.requests_to("/files/rfc8785-")
    assert code == 0, stderr
    assert "lib/rfc8785/__init__.py" in _vendored(out)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to hash a CA dir")
def test_ssl_cert_dir_names_the_ca_pip_trusts_when_pack_vendors(
    make_project: ProjectFactory, wheelhouse: Path, certificate: Certificate, tmp_path: Path
) -> None:
    project = make_project(requirements="rfc8785\n")
    directory = tmp_path / "cas"
    directory.mkdir()
    shutil.copy(certificate.cert_file, directory / "corporate.pem")
    subprocess.run(["openssl", "rehash", str(directory)], check=True)
    out = tmp_path / "out"
    with _index(wheelhouse, certificate) as server:
        code, stderr = _pack(
            project, out, _index_url(server), tmp_path / "home", SSL_CERT_DIR=str(directory)
        )
    assert code == 0, stderr
    assert "lib/rfc8785/__init__.py" in _vendored(out)


@pytest.mark.parametrize(
    ("problem", "remedy"),
    [
        ("wrong_host", "not for this host name: check the host in the index URL"),
        ("out_of_date", "has expired or is not valid yet: check this machine's clock"),
    ],
)
def test_an_index_certificate_for_another_host_or_expired_is_not_sent_to_the_ca_settings(
    make_project: ProjectFactory, wheelhouse: Path, tmp_path: Path, problem: str, remedy: str
) -> None:
    """The index's CA is trusted (``SSL_CERT_FILE`` names it) but its certificate names
    another host, or has expired: naming the CA again, the remedy of an untrusted issuer,
    cannot help, and the line says what can."""
    directory = tmp_path / "ca"
    directory.mkdir()
    certificate = make_certificate(
        directory, other_host=problem == "wrong_host", expired=problem == "out_of_date"
    )
    project = make_project(requirements="rfc8785\n")
    out = tmp_path / "out"
    code, stderr, _ = _pack_with_ca_file(project, out, wheelhouse, certificate, tmp_path)
    assert code == 1, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert line.endswith(" [network]"), stderr
    assert "CERTIFICATE_VERIFY_FAILED" in line, line
    assert remedy in line, line
    assert "SSL_CERT_FILE" not in line, line
    assert not out.exists()
