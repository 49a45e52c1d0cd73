"""Every command reads a manifest as the daemon's ``toml`` crate does (0.8.23 over toml_edit
0.22.27): past a leading UTF-8 byte-order mark (``parser/document.rs:36-37``), with CRLF line
ends, a date-time in the year 0000 (``parser/datetime.rs:131-136``) and a leap second
(``:201-212``). Each manifest here is one the daemon loads; each command must do with it
exactly what it does with the same manifest written plainly."""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from check.check_microapps import companion, scripted_microapp
from check.check_plugins import scripted_plugin
from support.cli import clean_env, nexo

VARIANTS: dict[str, Callable[[str], str]] = {
    "plain": lambda text: text,
    "year-0000": lambda text: text + "\n[plugin.http_server]\nwhen = 0000-01-01T00:00:00Z\n",
    "leap-second": lambda text: text + "\n[plugin.http_server]\nwhen = 2016-12-31T23:59:60Z\n",
    "bom": lambda text: "\ufeff" + text,
    "bom-crlf": lambda text: "\ufeff" + text.replace("\n", "\r\n"),
}
DAEMON_READS = [name for name in VARIANTS if name != "plain"]


def _plugin(tmp_path: Path, variant: str) -> Path:
    root = scripted_plugin(tmp_path / variant / "project", "ok", plugin_id="probe")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('probe')\n")
    manifest = root / "nexo-plugin.toml"
    manifest.write_bytes(VARIANTS[variant](manifest.read_text()).encode())
    return root


def _microapp(tmp_path: Path, variant: str) -> Path:
    """A microapp whose ``plugin.toml`` carries the BOM variants and whose companion
    ``nexo-plugin.toml`` the date ones (the extension manifest has no key that takes a date)."""
    root = scripted_microapp(
        tmp_path / variant / "microapp", "ok", extension_id="probe",
        companion=companion("probe", required=("agents.list",)),
    )  # fmt: skip
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('probe')\n")
    name = "plugin.toml" if variant.startswith("bom") else "nexo-plugin.toml"
    manifest = root / name
    manifest.write_bytes(VARIANTS[variant](manifest.read_text()).encode())
    return root


def _tarball(root: Path) -> Path:
    """``root`` as a release tarball (with its ``.sha256``) beside it."""
    tarball = root.parent / "probe-0.1.0-noarch.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        for path in sorted(root.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(root)), recursive=False)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    tarball.with_name(tarball.name + ".sha256").write_text(f"{digest}  {tarball.name}\n")
    return tarball


def _checks(target: Path, tmp_path: Path) -> tuple[int, list[tuple[str, str, str]]]:
    """Exit code and every check's name, status and detail (less what differs from run to
    run: timings, pids, temporary paths)."""
    result = nexo(
        "plugin", "check", target, "--json", "--timeout-ms", "10000",
        env=clean_env(NEXO_HOME=str(tmp_path / "home")),
    )  # fmt: skip
    checks = [
        (check["name"], check["status"], re.sub(r"\d+ ms", "N ms", check.get("detail", "")))
        if check["name"] not in {"initialize", "spawn", "environment"}
        else (check["name"], check["status"], "")
        for check in result.document["checks"]
    ]
    return result.code, checks


@pytest.mark.parametrize("variant", DAEMON_READS)
@pytest.mark.parametrize("form", ["directory", "tarball"])
@pytest.mark.parametrize("kind", ["plugin", "microapp"])
def test_check_reads_the_manifest_as_the_daemon_does(
    tmp_path: Path, kind: str, form: str, variant: str
) -> None:
    make = _plugin if kind == "plugin" else _microapp
    outcomes = []
    for name in ("plain", variant):
        root = make(tmp_path, name)
        outcomes.append(_checks(root if form == "directory" else _tarball(root), tmp_path))
    plain, read = outcomes
    assert plain[0] == 0
    assert read == plain


@pytest.mark.parametrize("variant", DAEMON_READS)
@pytest.mark.parametrize("kind", ["plugin", "microapp"])
def test_pack_then_install_list_verify_doctor_info_read_it_as_the_daemon_does(
    tmp_path: Path, kind: str, variant: str
) -> None:
    make = _plugin if kind == "plugin" else _microapp
    seen = []
    for name in ("plain", variant):
        project = make(tmp_path, name)
        out = tmp_path / name / "dist"
        env = clean_env(NEXO_HOME=str(tmp_path / name / "home"))
        packed = nexo("plugin", "pack", project, "--out", out, "--json", env=env)
        assert packed.code == 0, packed.stderr
        [tarball] = out.glob("*.tar.gz")
        with tarfile.open(tarball) as archive:
            members = sorted(archive.getnames())
            shipped = {
                member: archive.extractfile(member).read()  # type: ignore[union-attr]
                for member in ("nexo-plugin.toml", "plugin.toml")
                if member in members
            }
        # The manifests ship byte for byte as written.
        assert shipped == {member: (project / member).read_bytes() for member in shipped}
        dest = tmp_path / name / "plugins"
        info = nexo("plugin", "info", tarball, "--json", env=env)
        installed = nexo("plugin", "install", tarball, "--dest", dest, "--yes", "--json", env=env)
        listed = nexo("plugin", "list", "--dest", dest, "--json", env=env)
        verified = nexo("plugin", "verify", "--dest", dest, "--json", env=env)
        doctor = nexo("plugin", "doctor", "--no-check", "--dest", dest, "--json", env=env)
        seen.append(
            {
                "members": members,
                "info": (info.code, info.document.get("plugin")),
                "install": (installed.code, installed.document.get("id")),
                "tree": sorted(p.name for p in (dest / "probe-0.1.0").iterdir()),
                "list": (
                    listed.code,
                    [(p["id"], p["version"]) for p in listed.document["plugins"]],
                ),
                "verify": (verified.code, [p["ok"] for p in verified.document["plugins"]]),
                "doctor": (
                    doctor.code,
                    sorted((f["check"], f["severity"]) for f in doctor.document["findings"]),
                ),
            }
        )
    plain, read = seen
    assert plain["install"] == (0, "probe"), json.dumps(plain)
    assert read == plain
