"""Fleet commands fail with one line and a kind (one JSON document with --json), never a
traceback, and write nothing."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from support.cli import CliResult, nexo
from support.registry import Registry
from support.stderr import without_notes

from .conftest import LINUX, MakeDist, push_cli


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("args", "code", "kind"),
    [
        (["install", "oci://127.0.0.1:1/Bad/Name", "--yes"], 2, "source_invalid"),
        (["install", "oci://registry.example/a/b:1", "--plain-http", "--yes"], 2, "usage"),
        (["push", "{tmp}/no-such-dist", "oci://127.0.0.1:1/a/b"], 2, "usage"),
        (["push", "{tmp}", "oci://127.0.0.1:1/a/b@sha256:" + "a" * 64], 2, "usage"),
        (["mirror", "acme/echo", "oci://127.0.0.1:1/a/b"], 2, "usage"),
        (["lock", "-f", "{tmp}/missing.toml"], 2, "wanted_invalid"),
        (["sync", "--lock", "{tmp}/missing.lock", "--dest", "{tmp}/root"], 2, "lock_invalid"),
        (
            ["sync", "--lock", "{tmp}/missing.lock", "--dest", "{tmp}/root", "--frozen"],
            1,
            "lock_stale",
        ),
        (["lock", "-f", "{tmp}/missing.toml", "--check"], 2, "wanted_invalid"),
        (["lock", "-f", "{tmp}/missing.toml", "--check", "--upgrade"], 2, "usage"),
        (["lock", "-f", "{tmp}/missing.toml", "--check", "echo"], 2, "usage"),
        (["install", "oci://127.0.0.1:{port}/a/b:1", "--plain-http", "--yes"], 1, "network"),
        (
            [
                "install",
                "oci://127.0.0.1:1/a/b:1",
                "--registry-config",
                "{tmp}/none.json",
                "--plain-http",
                "--yes",
            ],
            2,
            "registry_config",
        ),
    ],
)
def test_bad_input_is_one_line_with_its_kind(
    tmp_path: Path, fleet_env: dict[str, str], args: list[str], code: int, kind: str
) -> None:
    filled = [
        arg.replace("{tmp}", str(tmp_path)).replace("{port}", str(_closed_port())) for arg in args
    ]
    if filled[0] == "install":
        filled += ["--dest", str(tmp_path / "root")]
    before = _files_and_times(tmp_path)
    result = nexo("plugin", *filled, "--json", env=fleet_env, in_process=True)
    assert result.code == code, result.stderr
    assert "Traceback" not in result.stderr
    problems = without_notes(result.stderr)
    assert problems.count("\n") == 1
    assert problems.startswith("error: ")
    assert result.document["kind"] == kind
    assert result.error_line.endswith(f" [{kind}]"), result.error_line
    # Nothing written anywhere: no root, no NEXO_HOME, no cache, no lock.
    assert _files_and_times(tmp_path) == before


@pytest.mark.parametrize("option", ["--lock", "-f"])
def test_a_fleet_file_that_is_a_directory_is_said_in_words(
    tmp_path: Path, fleet_env: dict[str, str], option: str
) -> None:
    """The reason is the system's words, not Python's (``[Errno 22] … : '/path'``)."""
    (tmp_path / "given").mkdir()
    command = ["sync", "--lock"] if option == "--lock" else ["lock", "-f"]
    args = [
        *command,
        str(tmp_path / "given"),
        *(["--dest", str(tmp_path / "root")] * (option == "--lock")),
    ]
    result = nexo("plugin", *args, env=fleet_env, in_process=True)
    assert result.code == 2, result.stderr
    kind = "lock_invalid" if option == "--lock" else "wanted_invalid"
    assert result.error_line == (
        f"error: {tmp_path / 'given'}: cannot read it (is not a regular file) [{kind}]"
    )
    assert not (tmp_path / "root").exists()


def _assert_refused(
    result: CliResult, registry: Registry, kind: str, named: str, *, code: int = 1
) -> None:
    """One line naming ``named``, of ``kind``, and nothing pushed."""
    assert result.code == code, result.stderr
    assert result.document["kind"] == kind
    assert named in result.document["error"]
    assert without_notes(result.stderr).count("\n") == 1
    _assert_nothing_pushed(registry)


def _assert_nothing_pushed(registry: Registry) -> None:
    """The repository was never created: no blob, no manifest, no tag."""
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"http://{registry.host}/v2/plugins/echo/tags/list")
    refused.value.close()
    assert refused.value.code == 404


@pytest.mark.parametrize("bundle", [b"{not json", b"[]", b"", b'{"mediaType": "x"}\n[1]\n'])
def test_push_refuses_a_bundle_no_host_could_read_and_pushes_nothing(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    bundle: bytes,
) -> None:
    """Install reads every bundle before it trusts one; a push of a broken one would publish
    a version no host can install."""
    dist = make_dist()
    broken = dist / f"echo-1.2.3-{LINUX}.tar.gz.sigstore.json"
    broken.write_bytes(bundle)
    _assert_refused(push_cli(dist, registry, fleet_env), registry, "signature_invalid", str(broken))


@pytest.mark.parametrize("epoch", ["soon", "\u00b2", "99999999999999"])
def test_push_refuses_a_malformed_source_date_epoch_and_pushes_nothing(
    tmp_path: Path,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    epoch: str,
) -> None:
    """``pack`` refuses the same values (usage): the index's created time is never a
    traceback (``int("²")``, a year past 9999) nor silently another time."""
    dist = make_dist()
    result = push_cli(dist, registry, {**fleet_env, "SOURCE_DATE_EPOCH": epoch})
    _assert_refused(result, registry, "usage", "SOURCE_DATE_EPOCH", code=2)


def test_sync_refuses_a_malformed_source_date_epoch_before_anything_is_written(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """The receipts' time falls back to ``SOURCE_DATE_EPOCH``: a malformed one is the run's
    usage error up front, never a traceback halfway through one plugin."""
    lock = tmp_path / "nexo-plugins.lock"
    lock.write_text("lock_version = 1\n", encoding="utf-8")
    root = tmp_path / "root"
    result = nexo(
        "plugin", "sync", "--lock", str(lock), "--dest", str(root), "--json",
        env={**fleet_env, "SOURCE_DATE_EPOCH": "\u00b2"}, in_process=True,
    )  # fmt: skip
    assert result.code == 2, result.stderr
    assert result.document["kind"] == "usage"
    assert "SOURCE_DATE_EPOCH" in result.document["error"]
    assert not root.exists()
    assert lock.read_text(encoding="utf-8") == "lock_version = 1\n"


def test_push_refuses_a_manifest_copy_other_than_the_tarballs_and_pushes_nothing(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """A ``dist/`` holding the manifest copy of another pack would publish it as the version's
    ``dev.nexo.plugin.manifest``, which ``lock --nexo-version`` decides by, while every host
    installs the tarball's own manifest."""
    from support.tarballs import manifest_text

    dist = make_dist()
    stale = dist / "nexo-plugin.toml"
    stale.write_text(manifest_text("echo", "1.2.3").replace(">=0.1.0", ">=9.0.0"))
    _assert_refused(push_cli(dist, registry, fleet_env), registry, "source_invalid", str(stale))


@pytest.mark.parametrize("copy", ["with its manifest copy", "without a manifest copy"])
def test_push_refuses_a_tarball_named_for_another_plugin_and_pushes_nothing(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, copy: str
) -> None:
    """A tarball renamed to another id or version would be published under that version
    (its index annotations and tag), while every host that installs it refuses its manifest
    (``manifest_mismatch``): push refuses it as install does, whatever manifest copy lies
    beside it."""
    from support.tarballs import manifest_text, plugin_tarball, write_plugin

    dist = tmp_path / "dist"
    write_plugin(dist, "echo", "1.2.3", target=LINUX, data=plugin_tarball("echo", "1.3.0"))
    if copy == "with its manifest copy":
        (dist / "nexo-plugin.toml").write_text(manifest_text("echo", "1.3.0"))
    result = push_cli(dist, registry, fleet_env)
    _assert_refused(result, registry, "manifest_mismatch", f"echo-1.2.3-{LINUX}.tar.gz")
    assert "echo 1.3.0" in result.document["error"]


def test_push_refuses_a_sidecar_over_the_cap_and_pushes_nothing(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    """A ``.sha256`` beside a tarball is read as install reads one (at most 64 KiB, a regular
    file): a larger one, which a host's install would refuse, is not read whole and pushed."""
    dist = make_dist()
    sidecar = dist / f"echo-1.2.3-{LINUX}.tar.gz.sha256"
    if not sidecar.exists():
        import hashlib

        tarball = dist / f"echo-1.2.3-{LINUX}.tar.gz"
        sidecar.write_text(f"{hashlib.sha256(tarball.read_bytes()).hexdigest()}  {tarball.name}\n")
    sidecar.write_bytes(sidecar.read_bytes() + b"\n" * (64 * 1024))
    result = push_cli(dist, registry, fleet_env)
    _assert_refused(result, registry, "checksum_mismatch", sidecar.name)


@pytest.mark.parametrize("name", ["nexo-plugin.toml", "plugin.toml"])
def test_push_refuses_a_manifest_copy_over_installs_cap_unread_and_pushes_nothing(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    name: str,
) -> None:  # fmt: skip
    """The manifest copy beside the tarballs is read as install reads a release's manifest
    asset (a regular file, at most 1 MiB): a larger one (here 64 MiB of nothing, a sparse
    file) is refused as that, not read whole and compared."""
    dist = make_dist()
    for present in ("nexo-plugin.toml", "plugin.toml"):
        (dist / present).unlink(missing_ok=True)
    with (dist / name).open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)
    result = push_cli(dist, registry, fleet_env)
    _assert_refused(result, registry, "source_invalid", str(dist / name))
    assert result.document["error"] == (
        f"{dist / name} is larger than 1048576 bytes, more than install reads of a manifest: "
        "pack again into an empty --out directory"
    )


@pytest.mark.parametrize(
    "case",
    [
        (f"echo-1.2.3-{LINUX}.tar.gz", "fifo"),
        ("echo-1.2.3-noarch.tar.gz", "directory"),
        (f"echo-1.2.3-{LINUX}.tar.gz.sha256", "fifo"),
        ("nexo-plugin.toml", "fifo"),
        ("nexo-plugin.toml", "dangling link"),
    ],
)
def test_push_refuses_a_file_it_reads_that_is_no_regular_file_and_pushes_nothing(
    tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist,
    case: tuple[str, str],
) -> None:  # fmt: skip
    """A tarball, sidecar or manifest copy that is a FIFO, a directory or a dangling link
    was passed over: push published the other targets (or no manifest annotation), exit 0,
    without a word. It is refused, naming it, and nothing is pushed."""
    import os

    name, planted = case
    dist = make_dist()
    path = dist / name
    if path.exists():
        path.unlink()
    if planted == "fifo":
        os.mkfifo(path)
    elif planted == "directory":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "nowhere")
    result = push_cli(dist, registry, fleet_env)
    _assert_refused(result, registry, "source_invalid", f"{path} is not a regular file")


def test_a_relock_that_fails_names_its_kind_as_every_sync_failure_line(
    tmp_path: Path, fleet_env: dict[str, str]
) -> None:
    """A sync beside a changed wanted set locks it again first; a plugin that cannot be
    resolved then stops the run, and its line is ``error: ID: MESSAGE [KIND]`` like the
    line of every plugin a sync fails on (the kind is the document's with --json)."""
    (tmp_path / "nexo-plugins.toml").write_text('[plugins.echo]\nsource = "acme/echo"\n')
    env = {**fleet_env, "NEXO_GITHUB_API_BASE": f"http://127.0.0.1:{_closed_port()}"}
    root = tmp_path / "root"
    for json_flag in ((), ("--json",)):
        done = nexo("plugin", "sync", "--dest", str(root), *json_flag, env=env, cwd=tmp_path,
                    in_process=True)  # fmt: skip
        assert done.code == 1, done.stderr
        [line] = [each for each in done.stderr.splitlines() if each.startswith("error: ")]
        assert line.startswith("error: echo: latest release of acme/echo: ")
        assert line.endswith(" [network]")
        if json_flag:
            document = done.document
            assert (document["kind"], document["plugin"]) == ("network", "echo")
            assert not document["error"].endswith("]")  # the kind is its own key there
        assert not (tmp_path / "nexo-plugins.lock").exists()
        assert not root.exists() or not any(root.iterdir())


@pytest.mark.parametrize(
    ("holds", "found"),
    [
        ("two versions", "echo 1.2.3, echo 1.3.0"),
        ("two plugins", "echo 1.2.3, other 1.2.3"),
        ("no tarball", "no <id>-<version>-<target>.tar.gz"),
    ],
)
def test_push_of_a_dist_not_holding_one_version_is_refused_and_pushes_nothing(
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    holds: str,
    found: str,
) -> None:
    """``push`` publishes the tarballs of one version: a DIST two packs wrote into (or none)
    is refused before anything is sent, and neither DIST nor NEXO_HOME is touched."""
    from support.tarballs import tree_snapshot

    dist = make_dist()
    if holds == "no tarball":
        for tarball in dist.glob("*.tar.gz*"):
            tarball.unlink()
    else:
        other = make_dist(*(("echo", "1.3.0") if holds == "two versions" else ("other",)))
        for path in other.glob("*.tar.gz*"):
            path.rename(dist / path.name)
    home = Path(fleet_env["NEXO_HOME"])
    before = tree_snapshot(dist), tree_snapshot(home)
    result = push_cli(dist, registry, fleet_env)
    _assert_refused(result, registry, "source_invalid", str(dist))
    assert f"must hold the tarballs of exactly one plugin version (found {found})" in (
        result.error_line
    )
    assert result.error_line.endswith(" [source_invalid]"), result.error_line
    assert (tree_snapshot(dist), tree_snapshot(home)) == before


def _files_and_times(root: Path) -> dict[str, tuple[str, int]]:
    """Every entry below ``root``: its content hash (a directory: ``dir``) and modification
    time (a file rewritten with the same bytes is written too)."""
    from support.tarballs import tree_snapshot

    return {
        path: (entry[2] or entry[0], (root / path).lstat().st_mtime_ns if entry[0] == "file" else 0)
        for path, entry in tree_snapshot(root).items()
    }


LOCKED = "lock_version = 1\n"
UNCLOSED = "lock_version = 1\n[plugins.echo\n"
NO_TARGETS = "lock_version = 1\n[plugins.echo]\nsource = 'acme/echo'\n"
ECHO = '[plugins.echo]\nsource = "acme/echo"\n'


def _pinned(source: str, resolved: str) -> str:
    """A lock whose one row, otherwise whole, pins ``resolved`` from ``source``."""
    return (
        f"lock_version = 1\n[plugins.echo]\nsource = '{source}'\nrequirement = '*'\n"
        f"version = '1.0.0'\nresolved = '{resolved}'\n[plugins.echo.targets.noarch]\n"
        f"asset = 'echo-1.0.0-noarch.tar.gz'\nsize = 1\nsha256 = '{'a' * 64}'\n"
        f"manifest = 'sha256:{'b' * 64}'\n"
    )


REGISTRY = "oci://127.0.0.1:1/plugins/echo"

# (command, the wanted file or None, the lock, the kind of the refusal)
BAD_FLEET_FILES = {
    "lock-wanted-not-a-table": ("lock", "[plugins]\nhello = 3\n", LOCKED, "wanted_invalid"),
    "lock-wanted-url": ("lock", ECHO.replace("acme/echo", "http://x/y"), LOCKED, "wanted_invalid"),
    "lock-lock-unclosed": ("lock", ECHO, UNCLOSED, "lock_invalid"),
    "sync-lock-version": ("sync", None, "lock_version = true\n", "lock_invalid"),
    "sync-lock-no-targets": ("sync", None, NO_TARGETS, "lock_invalid"),
    "sync-wanted-not-a-table": ("sync", "plugins = 1\n", LOCKED, "wanted_invalid"),
    # A row's `resolved` is read as its source's kind reads a version it pinned.
    "sync-resolved-no-source": ("sync", None, _pinned("acme/echo", "nonsense"), "lock_invalid"),
    "sync-resolved-a-path": ("sync", None, _pinned("acme/echo", "./echo.tar.gz"), "lock_invalid"),
    "sync-release-resolved-in-a-registry": (
        "sync", None, _pinned("acme/echo", f"{REGISTRY}@sha256:{'c' * 64}"), "lock_invalid"
    ),
    "sync-registry-resolved-a-release": (
        "sync", None, _pinned(REGISTRY, "acme/echo@v1.0.0"), "lock_invalid"
    ),
    "sync-registry-resolved-malformed": ("sync", None, _pinned(REGISTRY, "oci://"), "lock_invalid"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD_FLEET_FILES))
def test_a_bad_wanted_set_or_lock_is_refused_before_anything_is_written(
    tmp_path: Path, fleet_env: dict[str, str], case: str
) -> None:
    """``lock`` and ``sync`` read the wanted set and the lock before they write: a refusal
    leaves the lock (bytes and time), the wanted file and NEXO_HOME as they were, and makes no
    plugin root."""
    command, wanted, lock, kind = BAD_FLEET_FILES[case]
    work = tmp_path / "work"
    work.mkdir()
    (work / "nexo-plugins.lock").write_text(lock)
    if wanted is not None:
        (work / "nexo-plugins.toml").write_text(wanted)
    before = _files_and_times(tmp_path)
    dest = ["--dest", str(tmp_path / "root")] if command == "sync" else []
    for output in (["--json"], []):
        result = nexo("plugin", command, *dest, "--yes", *output, env=fleet_env, cwd=work)
        assert result.code == 2, result.stderr
        assert result.error_line.endswith(f" [{kind}]"), result.stderr
        if output:
            assert (result.document["ok"], result.document["kind"]) == (False, kind)
        assert _files_and_times(tmp_path) == before
