"""Resolving the TARGET of a check: directories, manifests, tarballs and installed ids."""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
from pathlib import Path

import pytest

from check.check_plugins import (
    SCRIPTED,
    python_first_on_path,
    scripted_plugin,
    sdk_packed,
    toml_string,
)
from nexo_pkg.check import run_check
from nexo_pkg.check.microapp_target import TargetError
from nexo_pkg.check.target import resolve_target
from nexo_pkg.core.errors import EXIT_USAGE, NexoError, UsageError
from nexo_pkg.sources.extract import safe_extract

MANIFEST_HEAD = """[plugin]
id = "demo"
version = "0.1.0"
name = "Demo"
description = "Demo"
min_nexo_version = ">=0.1.0"
"""


def write_manifest(root: Path, body: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "nexo-plugin.toml").write_text(MANIFEST_HEAD + body, encoding="utf-8")
    return root


def resolve_error(target: Path | str, dest: Path | None = None) -> TargetError:
    with pytest.raises(TargetError) as caught, resolve_target(target, dest=dest):
        pass  # pragma: no cover - resolution must fail first
    assert caught.value.exit_code == EXIT_USAGE
    assert caught.value.kind == "target_invalid"
    return caught.value


def pack_tarball(source: Path, tarball: Path) -> Path:
    with tarfile.open(tarball, "w:gz") as archive:
        for path in sorted(source.rglob("*")):
            archive.add(path, arcname=str(path.relative_to(source)), recursive=False)
    return tarball


# -- directories and manifests -------------------------------------------------------------


def test_directory_without_manifest_is_a_usage_error(tmp_path: Path) -> None:
    error = resolve_error(tmp_path)
    assert "no plugin.toml or nexo-plugin.toml" in error.message


def test_manifest_that_is_not_toml_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "nexo-plugin.toml").write_text("[plugin\n", encoding="utf-8")
    assert "not valid TOML" in resolve_error(tmp_path).message


def test_manifest_without_a_valid_id_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "nexo-plugin.toml").write_text('[plugin]\nid = "Bad-Id"\n', encoding="utf-8")
    assert "plugin.id" in resolve_error(tmp_path).message


def test_a_version_the_daemon_cannot_parse_is_a_usage_error(tmp_path: Path) -> None:
    """The daemon deserialises ``plugin.version`` as ``semver::Version`` (manifest.rs), so a
    plugin whose version it cannot parse never runs; a bad id is named first."""
    write_manifest(tmp_path)
    manifest = tmp_path / "nexo-plugin.toml"
    manifest.write_text(MANIFEST_HEAD.replace('"0.1.0"', '"1.0"'), encoding="utf-8")
    assert resolve_error(tmp_path).message == (
        f"{manifest}: `plugin.version` '1.0' is not a SemVer version: unexpected end of input "
        "while parsing minor version number; run `nexo plugin lint` for details"
    )
    manifest.write_text('[plugin]\nid = "Bad-Id"\nversion = "1"\n', encoding="utf-8")
    assert resolve_error(tmp_path).message == (
        f"{manifest}: missing or invalid `plugin.id`; run `nexo plugin lint` for details"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[plugin]\nentrypoint = "./run"\n', "`plugin.entrypoint` must be a table"),
        (
            '[plugin.entrypoint]\nargs = "--serve"\n',
            "`plugin.entrypoint.args` must be an array of strings",
        ),
        (
            '[plugin.entrypoint]\nargs = ["a", 1]\n',
            "`plugin.entrypoint.args` must be an array of strings",
        ),
        (
            "[plugin.entrypoint]\nenv = { A = 1 }\n",
            "`plugin.entrypoint.env` must be a table of strings",
        ),
        (
            '[plugin.entrypoint]\nenv = "A=1"\n',
            "`plugin.entrypoint.env` must be a table of strings",
        ),
        (
            "[plugin.entrypoint]\ncommand = 5\n",
            "`plugin.entrypoint.command` must be a string",
        ),
        (
            '[plugin.entrypoint]\ncommand = " "\n',
            "`plugin.entrypoint.command` must be a non-empty string",
        ),
        (
            '[plugin.entrypoint]\ncommand = "x"\nenv = { NEXO_A = "1", NEXO_B = "2" }\n',
            # subprocess.rs refuses before spawning; the message names the lint rule.
            "`plugin.entrypoint.env` sets NEXO_A, NEXO_B; names beginning with NEXO_ are "
            "reserved for the daemon, which refuses to spawn it (NX106)",
        ),
    ],
)
def test_an_entrypoint_the_daemon_cannot_read_is_a_usage_error(
    tmp_path: Path, body: str, message: str
) -> None:
    if body.startswith("[plugin]\n"):
        manifest = MANIFEST_HEAD.replace("[plugin]\n", body)
        tmp_path.joinpath("nexo-plugin.toml").write_text(manifest, encoding="utf-8")
    else:
        write_manifest(tmp_path, body)
    assert resolve_error(tmp_path).message == f"{tmp_path.resolve()}: {message}"


def test_nothing_to_run_is_a_usage_error(tmp_path: Path) -> None:
    write_manifest(tmp_path)
    assert "nothing to run" in resolve_error(tmp_path).message


def test_command_not_on_path_is_a_usage_error(tmp_path: Path) -> None:
    write_manifest(tmp_path, '[plugin.entrypoint]\ncommand = "no-such-program-xyz"\n')
    assert "not found on PATH" in resolve_error(tmp_path).message


def test_relative_command_may_not_escape_the_plugin_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside.sh"
    outside.write_text("#!/bin/sh\n", encoding="utf-8")
    outside.chmod(0o755)
    write_manifest(tmp_path / "p", '[plugin.entrypoint]\ncommand = "./../outside.sh"\n')
    assert "outside the plugin directory" in resolve_error(tmp_path / "p").message


def test_missing_launcher_suggests_packing_first(tmp_path: Path) -> None:
    write_manifest(tmp_path, '[plugin.entrypoint]\ncommand = "./bin/demo"\n')
    error = resolve_error(tmp_path)
    assert "does not exist" in error.message
    assert "nexo plugin pack" in error.message


def test_command_that_is_not_executable_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "run.sh").chmod(0o644)
    write_manifest(tmp_path, '[plugin.entrypoint]\ncommand = "./run.sh"\n')
    assert "not executable" in resolve_error(tmp_path).message


def test_reserved_env_names_are_refused(tmp_path: Path) -> None:
    write_manifest(
        tmp_path,
        f"[plugin.entrypoint]\ncommand = {toml_string(sys.executable)}\n"
        'env = { NEXO_SECRET = "x" }\n',
    )
    assert "NEXO_SECRET" in resolve_error(tmp_path).message


def test_relative_command_runs_with_manifest_args_and_env(tmp_path: Path) -> None:
    # ./run.sh only knows what to run through the manifest's env and args.
    root = tmp_path / "p"
    root.mkdir()
    run = root / "run.sh"
    run.write_text('#!/bin/sh\nexec "$FIXTURE_PYTHON" "$@"\n', encoding="utf-8")
    run.chmod(0o755)
    manifest = MANIFEST_HEAD.replace('"demo"', '"envdemo"', 1)
    manifest += (
        '[plugin.entrypoint]\ncommand = "./run.sh"\n'
        f'args = [{toml_string(str(SCRIPTED))}, "ok"]\n'
        f"env = {{ FIXTURE_PYTHON = {toml_string(sys.executable)} }}\n"
    )
    (root / "nexo-plugin.toml").write_text(manifest, encoding="utf-8")
    with resolve_target(root) as plugin:
        assert plugin.argv == [str(run), str(SCRIPTED), "ok"]
        assert plugin.env == {"FIXTURE_PYTHON": sys.executable}
        assert plugin.root == root.resolve()
    report = run_check(root, timeout_ms=10_000)
    assert report.ok, report.checks


def test_a_bare_command_is_looked_up_on_the_manifests_own_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare command name is found on the manifest's ``env.PATH`` when it sets one (as the
    daemon's Rust ``Command`` searches the PATH it was given), not on the caller's PATH."""
    tools = tmp_path / "tools"
    tools.mkdir()
    program = tools / "envdemo-plugin"
    program.write_text(
        f"#!/bin/sh\nexec {toml_string(sys.executable)} {toml_string(str(SCRIPTED))} ok\n",
        encoding="utf-8",
    )
    program.chmod(0o755)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "envdemo-plugin").symlink_to(program)
    monkeypatch.setenv("PATH", os.pathsep.join([str(elsewhere), os.environ["PATH"]]))
    root = tmp_path / "p"
    manifest = MANIFEST_HEAD.replace('"demo"', '"envdemo"', 1)
    manifest += '[plugin.entrypoint]\ncommand = "envdemo-plugin"\n'
    write = (root / "nexo-plugin.toml").write_text
    root.mkdir()
    own_path = os.pathsep.join([str(tools), "/usr/bin", "/bin"])
    write(manifest + f"env = {{ PATH = {toml_string(own_path)} }}\n", encoding="utf-8")
    with resolve_target(root) as plugin:
        assert plugin.argv == [str(program)]
    report = run_check(root, timeout_ms=10_000)
    assert report.ok, report.checks
    # Without the manifest's PATH, the caller's PATH is searched.
    write(manifest, encoding="utf-8")
    with resolve_target(root) as plugin:
        assert plugin.argv == [str(elsewhere / "envdemo-plugin")]
    # A manifest PATH without the program: not found, although the caller's PATH has it.
    write(manifest + 'env = { PATH = "/usr/bin:/bin" }\n', encoding="utf-8")
    assert "not found on PATH" in resolve_error(root).message


def test_manifest_file_as_target_uses_its_directory(tmp_path: Path) -> None:
    root = scripted_plugin(tmp_path / "p", "ok")
    with resolve_target(root / "nexo-plugin.toml") as plugin:
        assert plugin.plugin_id == "scripted"
        assert plugin.argv[0] == sys.executable


def test_other_files_are_a_usage_error(tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("hi", encoding="utf-8")
    assert "not a plugin directory" in resolve_error(other).message


def test_unknown_name_is_a_usage_error(tmp_path: Path) -> None:
    error = resolve_error("no/such/place")
    assert "no such file or directory" in error.message


# -- tarballs --------------------------------------------------------------------------------


def test_packed_tarball_is_extracted_checked_and_cleaned_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", python_first_on_path())
    tarball = pack_tarball(
        sdk_packed(tmp_path / "packed"), tmp_path / "sdkdemo-0.3.1-noarch.tar.gz"
    )
    with resolve_target(tarball) as plugin:
        extracted = plugin.root
        assert plugin.source == "tarball"
        assert plugin.argv == [str(extracted / "bin" / "sdkdemo")]
    assert not extracted.exists()
    report = run_check(tarball, timeout_ms=10_000)
    assert report.ok, report.checks


def unsafe_tarball(path: Path, member: tarfile.TarInfo, data: bytes = b"") -> Path:
    with tarfile.open(path, "w:gz") as archive:
        manifest = (MANIFEST_HEAD).encode()
        info = tarfile.TarInfo("nexo-plugin.toml")
        info.size = len(manifest)
        archive.addfile(info, io.BytesIO(manifest))
        archive.addfile(member, io.BytesIO(data) if data else None)
    return path


def symlink_member() -> tarfile.TarInfo:
    member = tarfile.TarInfo("bin/demo")
    member.type = tarfile.SYMTYPE
    member.linkname = "/bin/sh"
    return member


def escaping_member() -> tarfile.TarInfo:
    member = tarfile.TarInfo("../escape.txt")
    member.size = 2
    return member


@pytest.mark.parametrize("make_member", [symlink_member, escaping_member])
def test_unsafe_tarballs_are_refused_and_nothing_escapes(
    tmp_path: Path, make_member: object
) -> None:
    assert callable(make_member)
    member = make_member()
    tarball = unsafe_tarball(tmp_path / "evil.tar.gz", member, b"hi" if member.isfile() else b"")
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(NexoError) as caught:
        safe_extract(tarball, dest)
    assert caught.value.kind == "archive_unsafe"
    assert not (tmp_path / "escape.txt").exists()
    assert not (dest / "bin" / "demo").exists()


def test_file_that_is_not_a_tarball_is_archive_invalid(tmp_path: Path) -> None:
    bogus = tmp_path / "plugin.tar.gz"
    bogus.write_bytes(b"not gzip at all")
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(NexoError) as caught:
        safe_extract(bogus, dest)
    assert caught.value.kind == "archive_invalid"
    assert list(dest.iterdir()) == []


@pytest.mark.parametrize(
    ("members", "said"),
    [
        ({}, "its root: no plugin.toml or nexo-plugin.toml found"),
        ({"nexo-plugin.toml": b'[plugin]\nid = "Bad"\n'}, "nexo-plugin.toml: missing or invalid"),
    ],
)
def test_a_tarball_with_nothing_to_run_is_named_not_its_temporary_copy(
    tmp_path: Path, members: dict[str, bytes], said: str
) -> None:
    tarball = tmp_path / "demo-0.1.0-noarch.tar.gz"
    with tarfile.open(tarball, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    error = resolve_error(tarball)
    assert error.message.startswith(f"{tarball}: {said}"), error.message
    assert "nexo-check-" not in error.message
    assert (error.kind, error.exit_code) == ("target_invalid", EXIT_USAGE)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_special_file_is_not_a_target_and_not_called_missing(tmp_path: Path) -> None:
    fifo = tmp_path / "plugin.tar.gz"
    os.mkfifo(fifo)
    for target in (fifo, Path(os.devnull)):
        error = resolve_error(target)
        assert error.message.startswith(f"{target}: not a plugin directory, manifest or .tar.gz")
        assert "no such file" not in error.message


def test_run_check_on_an_unsafe_tarball_raises_before_spawning(tmp_path: Path) -> None:
    tarball = unsafe_tarball(tmp_path / "evil.tar.gz", symlink_member())
    with pytest.raises(NexoError) as caught:
        run_check(tarball)
    assert caught.value.kind == "archive_unsafe"


# -- installed plugins -------------------------------------------------------------------


def install(dest: Path, plugin_id: str, version: str, *, receipt: bool = True) -> Path:
    directory = dest / f"{plugin_id}-{version}"
    scripted_plugin(directory, "ok", plugin_id=plugin_id)
    if receipt:
        (directory / ".nexo-install.json").write_text(
            json.dumps({"schema_version": 1, "id": plugin_id, "version": version}),
            encoding="utf-8",
        )
    return directory


@pytest.mark.parametrize(
    ("versions", "newest"),
    [
        # Pre-release identifiers compare numerically where numeric (semver's Ord).
        (("1.0.0-beta.2", "1.0.0-beta.10", "1.0.0-alpha"), "1.0.0-beta.10"),
        (("1.0.0-rc.1", "1.0.0-beta.9"), "1.0.0-rc.1"),
        # Build metadata orders last, as the crate's derived Ord does.
        (("2.0.0+b1", "2.0.0+b2", "2.0.0-rc.1"), "2.0.0+b2"),
    ],
)
def test_installed_versions_are_ordered_as_semver_orders_them(
    tmp_path: Path, versions: tuple[str, ...], newest: str
) -> None:
    dest = tmp_path / "plugins"
    for version in versions:
        install(dest, "weather", version)
    with resolve_target("weather", dest=dest) as plugin:
        assert plugin.root == (dest / f"weather-{newest}").resolve()


def test_installed_id_resolves_to_the_newest_version(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    install(dest, "weather", "0.2.0")
    newest = install(dest, "weather", "0.10.0")
    install(dest, "weather", "0.10.0-rc.1")
    install(dest, "weather", "9.0.0", receipt=False)  # an orphan dir, not an install
    with resolve_target("weather", dest=dest) as plugin:
        assert plugin.root == newest.resolve()
        assert plugin.source == "installed"
    report = run_check(Path("weather"), dest=dest, timeout_ms=10_000)
    assert report.ok, report.checks


def test_installed_id_defaults_to_nexo_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "home"))
    installed = install(tmp_path / "home" / "state" / "plugins", "weather", "1.0.0")
    with resolve_target("weather") as plugin:
        assert plugin.root == installed.resolve()


def test_unknown_installed_id_is_a_usage_error(tmp_path: Path) -> None:
    dest = tmp_path / "plugins"
    install(dest, "weather", "1.0.0", receipt=False)
    error = resolve_error("weather", dest=dest)
    assert "no installed plugin" in error.message


# -- manifest names and ambiguous targets ----------------------------------------------------


def test_a_project_with_only_plugin_toml_is_checked(tmp_path: Path) -> None:
    root = scripted_plugin(tmp_path / "canonical", "ok", manifest_name="plugin.toml")
    assert not (root / "nexo-plugin.toml").exists()
    report = run_check(root, timeout_ms=10_000, strict=True)
    assert report.ok, report.checks


def test_a_shadowed_manifest_is_a_warning_naming_it(tmp_path: Path) -> None:
    root = scripted_plugin(tmp_path / "both", "ok")
    (root / "plugin.toml").write_text(MANIFEST_HEAD.replace('"demo"', '"other"'), "utf-8")
    with resolve_target(root) as plugin:
        assert plugin.plugin_id == "scripted"  # from nexo-plugin.toml, met first
        assert plugin.notes
    report = run_check(root, timeout_ms=10_000)
    assert report.ok, report.checks
    check = report.get("manifest")
    assert check is not None
    assert check.status == "warn"
    assert "plugin.toml is shadowed by nexo-plugin.toml" in check.detail
    assert not run_check(root, timeout_ms=10_000, strict=True).ok


def test_dest_names_the_installed_plugin_even_when_a_directory_has_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "plugins"
    installed = install(dest, "weather", "1.0.0")
    work = tmp_path / "work"
    scripted_plugin(work / "weather", "ok", plugin_id="weather")
    monkeypatch.chdir(work)
    monkeypatch.setenv("NEXO_HOME", str(tmp_path / "empty-home"))
    with resolve_target("weather", dest=dest) as plugin:
        assert plugin.root == installed.resolve()
        assert plugin.source == "installed"
    with resolve_target("weather") as plugin:  # nothing installed by default: the directory
        assert plugin.root == (work / "weather").resolve()
        assert plugin.source == "directory"


def test_a_directory_and_an_installed_plugin_of_one_name_is_ambiguous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    root = home / "state" / "plugins"
    install(root, "weather", "1.0.0")
    work = tmp_path / "work"
    scripted_plugin(work / "weather", "ok", plugin_id="weather")
    monkeypatch.chdir(work)
    monkeypatch.setenv("NEXO_HOME", str(home))
    with pytest.raises(UsageError) as caught, resolve_target("weather"):
        pass  # pragma: no cover - resolution must fail first
    message = caught.value.message
    assert "ambiguous" in message
    assert "./weather" in message
    assert str(root) in message
    assert caught.value.exit_code == EXIT_USAGE
    with resolve_target("./weather") as plugin:  # a path is never ambiguous
        assert plugin.source == "directory"


def test_the_default_root_expands_a_tilde_in_nexo_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As install reads NEXO_HOME (``~/nexo`` is the user's home, not a directory named ``~``)."""
    from nexo_pkg.check.target import default_install_root

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NEXO_HOME", "~/nexo")
    assert default_install_root() == tmp_path / "nexo" / "state" / "plugins"
    monkeypatch.delenv("NEXO_HOME")
    assert default_install_root() == tmp_path / ".nexo" / "state" / "plugins"


def test_check_reads_installs_by_the_receipt_name_install_writes() -> None:
    """``check`` and ``install`` sit side by side on one floor (neither may import the
    other), so both take the receipt's name from the floor below; the names must stay one."""
    from nexo_pkg.check import target
    from nexo_pkg.install import receipts
    from nexo_pkg.manifest.names import RECEIPT_NAME

    assert RECEIPT_NAME == ".nexo-install.json"
    assert vars(target)["RECEIPT_NAME"] is receipts.RECEIPT_NAME is RECEIPT_NAME
