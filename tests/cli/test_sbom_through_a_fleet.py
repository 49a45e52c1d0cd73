"""The SBOM ``pack`` writes, followed through a fleet from the outside: real releases packed
from real projects with real wheels, published on the loopback GitHub stand-in; ``lock``
keeps each tarball's SBOM digest, two locks differ by it when a vendored package changes,
and after ``sync`` ``nexo plugin sbom`` prints the very document ``pack`` wrote beside the
tarball. A release whose SBOM ``install`` would refuse is refused by ``lock`` too, naming
the member, and no lock is written."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest
from pack.pack_helpers import build_wheel, write_project
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import use_stand_in
from support.tarballs import file, plugin_members, release_assets, targz

from nexo_pkg.pack.build import PackOptions, pack

EPOCH = 1_700_000_000


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: GitHubServer) -> Path:
    return use_stand_in(monkeypatch, tmp_path, server)


def _release(
    tmp_path: Path, server: GitHubServer, version: str, alpha: str, *, latest: bool
) -> bytes:
    """Pack ``hello`` ``version`` vendoring ``alpha`` ``alpha``, publish what pack wrote as
    the release ``v<version>``; return the bytes of the ``.cdx.json`` beside the tarball."""
    wheels = tmp_path / "wheels"
    build_wheel(
        wheels, "alpha", alpha, {"alpha/__init__.py": f"V = {alpha!r}\n".encode()},
        purelib=True, tag="py3-none-any", metadata="License-Expression: MIT\n",
    )  # fmt: skip
    project = write_project(
        tmp_path / f"project-{version}",
        plugin_id="hello",
        version=version,
        requirements=f"alpha=={alpha}\n",
    )
    result = pack(PackOptions(project=project, source_date_epoch=EPOCH))
    assets = {asset.path.name: asset.path.read_bytes() for asset in result.assets}
    server.publish("acme", "hello", f"v{version}", assets, latest=latest)
    [sbom] = [data for name, data in assets.items() if name.endswith(".cdx.json")]
    return sbom


def _lock(wanted: Path, source: str) -> tuple[str, dict[str, object]]:
    wanted.write_text(f'[plugins.hello]\nsource = "{source}"\n', encoding="utf-8")
    result = nexo("plugin", "lock", "-f", str(wanted), "--json", in_process=True)
    assert result.code == 0, result.stderr
    text = wanted.with_name("nexo-plugins.lock").read_text(encoding="utf-8")
    return text, tomllib.loads(text)["plugins"]["hello"]["targets"]["noarch"]


def test_the_lock_keeps_the_sbom_digest_and_two_locks_diff_by_the_vendored_change(
    home: Path,
    server: GitHubServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    offline_pip_env: dict[str, str],
) -> None:
    monkeypatch.setenv(
        "PIP_FIND_LINKS", f"{tmp_path / 'wheels'} {offline_pip_env['PIP_FIND_LINKS']}"
    )
    first = _release(tmp_path, server, "1.0.0", "1.0", latest=False)
    second = _release(tmp_path, server, "1.1.0", "1.1", latest=True)
    assert first != second
    fleet = tmp_path / "fleet"
    fleet.mkdir()
    wanted = fleet / "nexo-plugins.toml"

    before, locked = _lock(wanted, "acme/hello@v1.0.0")
    assert locked["sbom"] == "sha256:" + hashlib.sha256(first).hexdigest()
    after, relocked = _lock(wanted, "acme/hello@v1.1.0")
    assert relocked["sbom"] == "sha256:" + hashlib.sha256(second).hexdigest()
    # The fleet sees what changed inside the plugin: the SBOM line is among the changed ones.
    changed = sorted(set(after.splitlines()) - set(before.splitlines()))
    assert f'sbom = "{relocked["sbom"]}"' in changed

    synced = nexo("plugin", "sync", "--lock", str(fleet / "nexo-plugins.lock"), "--yes",
                  "--json", in_process=True)  # fmt: skip
    assert synced.code == 0, synced.stderr
    printed = nexo("plugin", "sbom", "hello", in_process=True)
    assert printed.code == 0, printed.stderr
    # The installed plugin's SBOM is, byte for byte, the document the lock names.
    assert printed.stdout.encode() == second


OTHER_PLUGIN = (
    b'{"bomFormat": "CycloneDX", "specVersion": "1.6", "version": 1, '
    b'"metadata": {"component": {"type": "application", "name": "other", "version": "1.0.0"}}}'
)


@pytest.mark.parametrize(
    ("member", "said"),
    [
        (b"{not json", "it is not JSON"),
        (b'{"a": "' + b"x" * (4 * 1024 * 1024) + b'"}', "over the cap of 4194304"),
        (OTHER_PLUGIN, "it describes 'other' '1.0.0', not hello 1.0.0"),
    ],
    ids=["malformed", "oversized", "another-plugin"],
)
def test_a_release_whose_sbom_install_refuses_is_never_locked(
    home: Path, server: GitHubServer, tmp_path: Path, member: bytes, said: str
) -> None:
    tarball = targz([*plugin_members("hello", "1.0.0"), file("sbom.cdx.json", member)])
    server.publish("acme", "hello", "v1.0.0", release_assets("hello", "1.0.0", data=tarball))
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text('[plugins.hello]\nsource = "acme/hello"\n', encoding="utf-8")
    result = nexo("plugin", "lock", "-f", str(wanted), "--json", in_process=True)
    assert result.code == 1, result.stderr
    assert result.document["kind"] == "archive_invalid"
    assert "the archive's sbom.cdx.json is not the plugin's SBOM" in result.document["error"]
    assert said in result.document["error"]
    assert result.stderr.count("error: ") == 1
    assert not wanted.with_name("nexo-plugins.lock").exists()
