"""Numbers in a manifest, read as the daemon's parser reads them (toml_edit 0.22.27, under
``toml`` 0.8.23), by every command: ``tomllib`` takes any integer and reads ``1e400`` as
infinity; the daemon's parser refuses an integer outside ``i64`` in any radix
(``crates/toml_edit/src/parser/numbers.rs:43-47``: ``i64::from_str_radix`` on the digits after
``0x``/``0o``/``0b``, which take no sign, and ``str::parse::<i64>`` for decimal) and a float
literal that Rust's ``f64`` parse makes ``+inf`` (``numbers.rs:201-204``,
``verify(|f| *f != f64::INFINITY)``: ``-1e400`` is read, as negative infinity). Signs on
``0x``/``0o``/``0b``, leading zeros and stray underscores are refused by both grammars
(``numbers.rs:54-88``, ``:93-190``, ``:246-266``); leading zeros in an exponent are taken by
both (``numbers.rs:270-284``, ``zero_prefixable_int``).

A plugin's manifest is linted by ``check``, ``pack``, ``info`` and ``install`` (NX001), which
already refuse these. A microapp's ``nexo-plugin.toml`` is where the readers parted: ``check``
says the daemon skips a companion it cannot read, and ``pack`` lints it. Each refused literal
must get exactly what a TOML syntax error gets there; each accepted one what a plain number
gets."""

from __future__ import annotations

import hashlib
import tarfile
from pathlib import Path

import pytest
from check.check_microapps import companion, scripted_microapp
from check.check_plugins import scripted_plugin
from support.cli import clean_env, nexo

#: Literals the daemon's parser refuses that tomllib reads.
DAEMON_REFUSES = [
    "99999999999999999999",
    "9223372036854775808",  # i64::MAX + 1
    "+9223372036854775808",
    "-9223372036854775809",  # i64::MIN - 1
    "0x8000000000000000",  # i64::MIN's bits: no sign, so out of range
    "0xFFFF_FFFF_FFFF_FFFF",
    "0o1000000000000000000000",
    "0b1" + "0" * 63,
    "1e400",
    "+1e400",
    "1.8e308",
    "9e99999",
]
#: Literals both parsers refuse (the grammar): as a syntax error before and after.
BOTH_REFUSE = [
    "+0x1",
    "-0o7",
    "-0b1",
    "01",
    "-01",
    "00.5",
    "1__0",
    "1_",
    "0x_1",
    "0X10",
    "1e_5",
    "1.e5",
]
#: Literals the daemon reads: must pass as a plain number does.
DAEMON_READS = [
    "9223372036854775807",
    "+9223372036854775807",
    "-9223372036854775808",
    "0x7FFF_FFFF_FFFF_FFFF",
    "0o777777777777777777777",
    "0b" + "1" * 63,
    "0x0000000000000000000001",
    "-1e400",
    "1e-400",
    "1.7976931348623157e308",
    "1e007",
    "1E+0_07",
    "nan",
    "+nan",
    "-nan",
    "+inf",
    "-inf",
]


def _microapp(tmp_path: Path, literal: str) -> Path:
    root = scripted_microapp(
        tmp_path / "microapp", "ok", extension_id="probe",
        companion=companion("probe", required=("agents.list",))
        + f"\n[plugin.http_server]\nx = {literal}\n",
    )  # fmt: skip
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('probe')\n")
    return root


def _tree(root: Path) -> list[tuple[str, bytes]]:
    return sorted(
        (str(path.relative_to(root)), path.read_bytes() if path.is_file() else b"")
        for path in root.rglob("*")
    )


def _companion_outcome(tmp_path: Path, literal: str) -> tuple[object, ...]:
    """What ``check`` and ``pack`` make of a microapp whose companion holds ``literal``: exit
    codes, the ``manifest`` check (its detail up to the reason) and pack's error kind."""
    root = _microapp(tmp_path / literal.replace("/", "_"), literal)
    before = _tree(root)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    checked = nexo("plugin", "check", root, "--json", "--timeout-ms", "10000", env=env)
    manifest = [
        (check["status"], check["detail"].split(" (", 1)[0])
        for check in checked.document["checks"]
        if check["name"] == "manifest"
    ]
    out = root.parent / "dist"
    packed = nexo("plugin", "pack", root, "--out", out, "--json", env=env)
    assert _tree(root) == before
    if packed.code != 0:
        assert not out.exists()
    return (checked.code, manifest, packed.code, packed.document.get("kind"))


@pytest.mark.parametrize("literal", DAEMON_REFUSES + BOTH_REFUSE)
def test_a_companion_number_the_daemon_refuses_is_a_companion_it_cannot_read(
    tmp_path: Path, literal: str
) -> None:
    assert _companion_outcome(tmp_path, literal) == (
        0,
        [("warn", "nexo-plugin.toml cannot be read")],
        1,
        "manifest_invalid",
    )


@pytest.mark.parametrize("literal", DAEMON_READS)
def test_a_companion_number_the_daemon_reads_passes(tmp_path: Path, literal: str) -> None:
    assert _companion_outcome(tmp_path, literal) == (0, [], 0, None)


def _plugin(tmp_path: Path, literal: str) -> Path:
    root = scripted_plugin(
        tmp_path / "project",
        "ok",
        plugin_id="probe",
        extra=f"\n[plugin.http_server]\nx = {literal}\n",
    )
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('probe')\n")
    return root


def _tarball(root: Path) -> Path:
    """``root`` as a local release tarball (with its ``.sha256``) beside it."""
    tarball = root.parent / "probe-0.1.0-noarch.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        for path in sorted(root.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(root)), recursive=False)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    tarball.with_name(tarball.name + ".sha256").write_text(f"{digest}  {tarball.name}\n")
    return tarball


def _manifest_check(root: Path, env: dict[str, str]) -> tuple[str, str]:
    """``check``'s ``manifest`` check of ``root``, decided before the plugin starts (which
    may then time out: the scripted plugin echoes its manifest, and Python's JSON writes
    ``NaN``, which is no JSON)."""
    checked = nexo("plugin", "check", root, "--json", "--timeout-ms", "1500", env=env)
    [(status, detail)] = [
        (check["status"], check.get("detail", ""))
        for check in checked.document["checks"]
        if check["name"] == "manifest"
    ] or [("absent", "")]
    return status, detail


@pytest.mark.parametrize("literal", DAEMON_REFUSES + BOTH_REFUSE)
def test_a_plugin_manifest_number_the_daemon_refuses_is_refused_by_every_command(
    tmp_path: Path, literal: str
) -> None:
    root = _plugin(tmp_path, literal)
    tarball = _tarball(root)
    before = (_tree(root), tarball.read_bytes())
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    status, detail = _manifest_check(root, env)
    assert (status, "NX001" in detail) == ("fail", True), detail
    out, dest = tmp_path / "dist", tmp_path / "plugins"
    packed = nexo("plugin", "pack", root, "--out", out, "--json", env=env)
    info = nexo("plugin", "info", tarball, "--json", env=env)
    installed = nexo("plugin", "install", tarball, "--dest", dest, "--yes", "--json", env=env)
    assert [(r.code, r.document.get("kind")) for r in (packed, info, installed)] == [
        (1, "manifest_invalid")
    ] * 3
    assert not out.exists()
    assert not dest.exists()
    assert (_tree(root), tarball.read_bytes()) == before


@pytest.mark.parametrize("literal", DAEMON_READS)
def test_a_plugin_manifest_number_the_daemon_reads_packs_and_installs(
    tmp_path: Path, literal: str
) -> None:
    root = _plugin(tmp_path, literal)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    # check lists a `manifest` check only when it has something to say about the manifest.
    assert _manifest_check(root, env) == ("absent", "")
    out, dest = tmp_path / "dist", tmp_path / "plugins"
    packed = nexo("plugin", "pack", root, "--out", out, "--json", env=env)
    assert packed.code == 0, packed.stderr
    [tarball] = out.glob("*.tar.gz")
    info = nexo("plugin", "info", tarball, "--json", env=env)
    installed = nexo("plugin", "install", tarball, "--dest", dest, "--yes", "--json", env=env)
    assert (info.code, installed.code, installed.document.get("id")) == (0, 0, "probe")
    assert (dest / "probe-0.1.0" / "nexo-plugin.toml").read_bytes() == (
        root / "nexo-plugin.toml"
    ).read_bytes()


def _extension_outcome(tmp_path: Path, value: str, with_companion: bool) -> tuple[object, ...]:
    """What ``check`` and ``pack`` make of a microapp whose ``plugin.toml`` holds
    ``x = VALUE``: exit codes, error kinds, the members packed; and that nothing in the
    project changed and a refused pack wrote nothing."""
    root = scripted_microapp(
        tmp_path / "microapp", "ok", extension_id="probe",
        companion=companion("probe") if with_companion else None,
        extra_toml=f"\n[extra]\nx = {value}\n",
    )  # fmt: skip
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("print('probe')\n")
    before = _tree(root)
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    checked = nexo("plugin", "check", root, "--json", "--timeout-ms", "1500", env=env)
    out = tmp_path / "dist"
    packed = nexo("plugin", "pack", root, "--out", out, "--json", env=env)
    assert _tree(root) == before
    members: list[str] = []
    if packed.code == 0:
        [tarball] = out.glob("*.tar.gz")
        with tarfile.open(tarball) as archive:
            members = sorted(archive.getnames())
    else:
        assert not out.exists()
    return (
        checked.code,
        checked.document.get("kind"),
        packed.code,
        packed.document.get("kind"),
        members,
    )


@pytest.mark.parametrize("with_companion", [False, True], ids=["alone", "with-companion"])
@pytest.mark.parametrize("literal", DAEMON_REFUSES)
def test_a_microapp_manifest_number_the_daemon_refuses_is_met_as_a_syntax_error(
    tmp_path: Path, literal: str, with_companion: bool
) -> None:
    """The daemon's extension host cannot parse such a ``plugin.toml``: every command does
    with it what it does with one holding a TOML syntax error (``x = =``)."""
    syntax = _extension_outcome(tmp_path / "syntax", "=", with_companion)
    assert syntax[0] != 0
    assert _extension_outcome(tmp_path / "number", literal, with_companion) == syntax
