"""``doctor`` parses each manifest once: the host requirements come from the document lint
parsed. Where lint's text is not the one the model reads (a BOM lint drops, CRLF line ends
that ``read_text`` turns into LF, an integer lint refuses) or lint parsed nothing (bytes that
are not UTF-8), the model's own parse runs: the findings are those of reading it twice.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from support.tarballs import manifest_text, plugin_tarball, write_plugin

from nexo_pkg.fleet.doctor import diagnose
from nexo_pkg.install.api import unmet_host_requirements
from nexo_pkg.install.options import InstallOptions
from nexo_pkg.install.pipeline import install
from nexo_pkg.manifest import model
from nexo_pkg.manifest.model import PluginManifest, manifest_from_text

UNKNOWN = '\n[plugin.requires]\nnexo_capabilities = ["vector_store", "broker"]\n'
WIRED = frozenset({"broker", "memory"})


def _installed(tmp_path: Path) -> Path:
    """An installed plugin whose manifest asks for a capability the daemon does not wire;
    the path of that manifest."""
    text = manifest_text("hello", "1.0.0", extra=UNKNOWN)
    data = plugin_tarball("hello", "1.0.0", manifest=text)
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=data)
    options = InstallOptions(dest=tmp_path / "plugins", nexo_home=tmp_path / "home")
    installed = install(str(tarball), options)
    (manifest,) = [p for p in installed.path.iterdir() if p.name.endswith("plugin.toml")]
    return manifest


def _expected(manifest: Path) -> list[str]:
    """The requirement warnings of a second, independent read, as doctor made them before."""
    try:
        parsed = manifest_from_text(manifest.read_text(encoding="utf-8", errors="replace"))
    except model.ManifestModelError:
        return []
    if not isinstance(parsed, PluginManifest):
        return []
    return [r.message for r in unmet_host_requirements(parsed, wired=WIRED)]


@pytest.mark.parametrize(
    ("rewrite", "parsed_again"),
    [
        (lambda raw: raw, False),
        (lambda raw: raw.replace(b"\n", b"\r\n"), True),
        (lambda raw: b"\xef\xbb\xbf" + raw, True),
        (lambda raw: raw + b"# caf\xe9\n", True),  # not UTF-8: lint did not parse it
        (lambda raw: raw + b"[x]\ny = 99999999999999999999\n", True),
    ],
    ids=["as-installed", "crlf", "bom", "latin-1-comment", "integer-past-i64"],
)
def test_requirements_from_the_document_lint_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rewrite: object, parsed_again: bool
) -> None:
    manifest = _installed(tmp_path)
    manifest.write_bytes(rewrite(manifest.read_bytes()))  # type: ignore[operator]
    expected = _expected(manifest)
    calls: list[str] = []

    def counted(text: str, **kwargs: int) -> object:
        calls.append(text)
        return manifest_from_text(text, **kwargs)

    monkeypatch.setattr(model, "manifest_from_text", counted)
    report = diagnose(tmp_path / "plugins", discovery=None, wired=WIRED)
    found = [f.message for f in report.findings if f.check == "requires"]
    assert found == expected
    assert len(calls) == int(parsed_again)
    if not parsed_again:
        assert len(found) == 1
        assert "vector_store" in found[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_manifest_swapped_for_a_fifo_after_it_was_found_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest doctor found is read as a regular file only (a link followed, as the
    daemon reads it): swapped for a FIFO between the lookup and the read, it is an error
    finding at once, where a plain read blocked for ever on a FIFO no one writes to."""
    from nexo_pkg.fleet import doctor
    from nexo_pkg.manifest.names import find_manifest

    manifest = _installed(tmp_path)

    def then_swapped(directory: Path) -> object:
        found = find_manifest(directory)
        if found.path == manifest:
            manifest.unlink()
            os.mkfifo(manifest)
        return found

    monkeypatch.setattr("nexo_pkg.fleet.doctor.find_manifest", then_swapped)
    reports: list[doctor.DoctorReport] = []
    worker = threading.Thread(
        target=lambda: reports.append(diagnose(tmp_path / "plugins", discovery=None)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=20)
    if worker.is_alive():
        with manifest.open("wb"):  # a writer that goes at once: the blocked read ends
            pass
        worker.join(timeout=20)
        pytest.fail("doctor blocked reading a FIFO put where the manifest was")
    (report,) = reports
    assert [(f.severity, f.message) for f in report.findings if f.check == "manifest"] == [
        ("error", f"cannot read {manifest.name}: is not a regular file")
    ]
    assert stat.S_ISFIFO(manifest.lstat().st_mode)  # looked at, never replaced or removed


_HUGE_READER = """
import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
from nexo_pkg.fleet.doctor import diagnose
report = diagnose(Path(sys.argv[1]), discovery=None)
for finding in report.findings:
    if finding.check == "manifest":
        print(finding.severity, finding.message)
"""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="RLIMIT_AS is POSIX")
def test_a_huge_manifest_is_never_read_whole(tmp_path: Path) -> None:
    """A manifest far past the size lint reads (here a sparse file larger than the memory the
    process may take) is read no further than lint's limit and a byte: doctor says what lint
    says of it (NX004), where reading it whole ran out of memory."""
    import subprocess
    import sys

    import nexo_pkg

    manifest = _installed(tmp_path)
    limit = 1 << 31
    with manifest.open("r+b") as handle:
        handle.truncate(limit + (1 << 30))  # sparse: no disk taken
    package_root = str(Path(nexo_pkg.__file__).parents[1])
    done = subprocess.run(
        [sys.executable, "-c", _HUGE_READER, str(tmp_path / "plugins"), str(limit)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": package_root},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "error nexo-plugin.toml:1: NX004 file is larger than 4,194,304 bytes; nexo-pkg reads "
        "manifests of up to 4,194,304 bytes"
    ]
