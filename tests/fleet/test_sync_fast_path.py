"""``nexo plugin sync`` runs without Typer (``cli/syncing.py``'s own argument parser): what it
prints, and its exit code, are exactly what the Typer command prints for the same arguments;
anything the small parser does not take goes to Typer. A frozen sync of unsigned plugins
imports neither Typer nor click, nor rich, tomlkit, sigstore or jsonschema; it sends its first
request before loading the installer, the manifest model or the span scanner, and with nothing
to install it loads no HTTP client at all."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.cli import fast_path_output, nexo
from support.registry import Registry
from support.tarballs import tree_snapshot

from nexo_pkg.cli.app import run as typer_run
from nexo_pkg.cli.syncing import fast_sync
from nexo_pkg.core import posix
from nexo_pkg.core.output import OUTPUT

from .conftest import LINUX, MakeDist, push_dist

PLUGINS = ("alpha", "bravo")
HEAVY = ("typer", "click", "rich", "tomlkit", "sigstore", "jsonschema")
# Not loaded by these syncs at all: the host's triples come from the OS directly, a tarball's
# dates are read for a push only, and the span scanner places findings, which a clean
# manifest (as these plugins') and no policy file never have; the registry's address is an IP
# literal, resolved without the IDNA codec; releasing a hold reads no daemon configuration;
# the ``[plugin.admin_ui]`` rules are for a manifest that has the table, the fixers for one
# with findings, the microapp readers for a microapp.
NEVER = (
    "platform",
    "gzip",
    "nexo_pkg.core.toml_spans",
    "encodings.idna",
    "nexo_pkg.install.discovery_edit",
    "nexo_pkg.lint.fixes",
    "nexo_pkg.manifest.microapp_model",
    "nexo_pkg.manifest.rules_admin_ui",
    "nexo_pkg.manifest.rules_visible_when",
)
# Not loaded yet when a frozen sync sends its first request: they are for after a download
# (the installer and what it checks a plugin with, the signature material and its verifier,
# the checksum sidecars), for resolving (lock, GitHub releases), or for a policy file (the
# span scanner and the diagnostics its findings become; these runs have none).
AFTER_FIRST_REQUEST = (
    "nexo_pkg.core.diagnostics",
    "nexo_pkg.core.toml_spans",
    "nexo_pkg.fleet.lock",
    "nexo_pkg.install.hold",
    "nexo_pkg.install.link",
    "nexo_pkg.install.payload",
    "nexo_pkg.install.pipeline",
    "nexo_pkg.install.summary",
    "nexo_pkg.lint.engine",
    "nexo_pkg.manifest.document",
    "nexo_pkg.manifest.model",
    "nexo_pkg.sources.checksum",
    "nexo_pkg.sources.github",
    "nexo_pkg.sources.releases",
    "nexo_pkg.trust.base",
    "nexo_pkg.trust.entry",
    "nexo_pkg.trust.material",
)
# Not loaded by a sync with nothing to install either: what an install is judged against
# (the daemon's reach) and the commands a refusal prints as its remedy.
INSTALLING = ("nexo_pkg.install.reach", "nexo_pkg.install.remedy", "shlex")
# Not loaded by a sync with nothing to install: it decides from the lock and the receipts.
NETWORK = (
    "httpx",
    "http.client",
    "nexo_pkg.net.client",
    "nexo_pkg.sources.oci",
    "nexo_pkg.sources.oci_source",
    "nexo_pkg.sources.registry",
    "nexo_pkg.trust.base",
)


@pytest.fixture(autouse=True)
def _output_settings() -> Iterator[None]:
    """``--quiet``, ``--verbose`` and ``--color`` set process-wide settings: put them back."""
    saved = vars(OUTPUT).copy()
    yield
    vars(OUTPUT).update(saved)


def _locked(tmp_path: Path, registry: Registry, make_dist: MakeDist, env: dict[str, str]) -> Path:
    """A lock of two unsigned plugins pushed to ``registry``."""
    for number, plugin_id in enumerate(PLUGINS):
        dist = make_dist(plugin_id, f"1.{number}.0", identity=None, targets=(LINUX,))
        push_dist(dist, registry.ref(f"plugins/{plugin_id}"), Path(env["NEXO_HOME"]))
    project = tmp_path / "project"
    project.mkdir()
    wanted = project / "nexo-plugins.toml"
    wanted.write_text(
        "".join(f'[plugins.{p}]\nsource = "{registry.ref(f"plugins/{p}")}"\n\n' for p in PLUGINS)
    )
    locked = nexo("plugin", "lock", "-f", str(wanted), "--plain-http", env=env, in_process=True)
    assert locked.code == 0, locked.stderr
    return project / "nexo-plugins.lock"


def _both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, arguments: list[str]
) -> tuple[tuple[object, str, str], tuple[object, str, str]]:
    """The same sync through the small parser and through Typer, each onto its own empty root
    (``DEST`` in ``arguments``), with the root's path put back to ``DEST`` in the output."""
    results = []
    for name, runner in (
        ("fast", fast_sync),
        ("typer", lambda a: typer_run(["plugin", "sync", *a])),
    ):
        dest = tmp_path / name / "root"
        code, out, err = fast_path_output(
            capsys, runner, [str(dest) if item == "DEST" else item for item in arguments]
        )
        results.append((code, out.replace(str(dest), "DEST"), err.replace(str(dest), "DEST")))
    return results[0], results[1]


@pytest.mark.parametrize(
    "extra",
    [
        ["--frozen", "--json"],
        ["--frozen", "-j", "1"],
        ["--dry-run"],
        ["--dry-run", "--json", "--prune"],
        ["-q", "--color", "never", "--frozen", "--jobs=2", "--timeout", "30"],
        ["--frozen", "--require-signature", "--json"],
        ["--frozen", "--require-signature", "--skip-signature-verify"],
        ["--frozen", "--jobs", "0", "--json"],
        ["--frozen", "--registry-mirror", "bad-mirror", "--json"],
    ],
    ids=[
        "json",
        "text-one-job",
        "dry-run",
        "dry-run-json",
        "quiet-timeout",
        "refused-unsigned",
        "contradicting-flags",
        "no-jobs",
        "bad-mirror",
    ],
)
def test_sync_without_typer_prints_what_typer_prints(
    *,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fleet_env: dict[str, str],
    registry: Registry,
    make_dist: MakeDist,
    extra: list[str],
) -> None:
    lock = _locked(tmp_path, registry, make_dist, fleet_env)
    for key, value in fleet_env.items():
        monkeypatch.setenv(key, value)
    arguments = ["--lock", str(lock), "--dest", "DEST", "--plain-http", *extra]
    fast, slow = _both(capsys, tmp_path, arguments)
    assert fast == slow
    if "--json" in extra:
        document = json.loads(fast[1])
        assert document["ok"] is (fast[0] == 0)
    if extra in (["--frozen", "--json"], ["--frozen", "-j", "1"]):
        assert fast[0] == 0
        assert tree_snapshot(tmp_path / "fast" / "root") == tree_snapshot(
            tmp_path / "typer" / "root"
        )
    if "--require-signature" in extra or extra[-2:] == ["0", "--json"]:
        assert fast[0] in {1, 2}
        assert not (tmp_path / "fast" / "root" / "alpha-1.0.0").exists()


@pytest.mark.parametrize(
    "arguments",
    [
        ["--help"],
        ["-h"],
        ["extra-argument"],
        ["--lock"],
        ["--lock", ""],
        ["--lock", "a", "--lock", "b"],
        ["--dest", "-x"],
        ["--jobs", "x"],
        ["--jobs", "-1"],
        ["--jobs=+3"],
        ["--jobs", "1_0"],
        ["--timeout", "1e3"],
        ["--timeout", "nan"],
        ["--json=yes"],
        ["--frozen", "--frozen"],
        ["--frozen="],
        ["--color", "sometimes"],
        ["-q", "-v"],
        ["-j4"],
        ["--no-such-flag"],
    ],
)
def test_what_the_small_parser_does_not_take_goes_to_typer(arguments: list[str]) -> None:
    assert fast_sync(arguments) is None


def test_completion_goes_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_NEXO_COMPLETE", "complete_bash")
    assert fast_sync(["--frozen"]) is None


def test_without_posix_names_typer_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the plugin-root commands refuse to run (Windows), Typer's command says so;
    tests/cli/test_platforms.py runs the refusal under the Windows shim."""
    monkeypatch.setattr(posix, "POSIX", False)
    assert fast_sync(["--frozen"]) is None


# The modules loaded when the process ends (written to the path in argv[1]), and when it sends
# its first request (``socket.connect``; argv[2]), each with the thread that loaded it.
_PROBE = """
import atexit, sys, threading
from nexo_pkg.cli.main import main

loaded_by = {}

def report(path=sys.argv[1]):
    with open(path, "w") as out:
        out.write("\\n".join(sorted(sys.modules)))

def watch(event, args, path=sys.argv[2], seen=[]):
    if event == "import":
        loaded_by.setdefault(args[0], threading.current_thread().name)
    elif event == "socket.connect" and not seen:
        seen.append(args)
        with open(path, "w") as out:
            out.write("\\n".join(f"{m} {loaded_by.get(m, '-')}" for m in sorted(sys.modules)))

atexit.register(report)
sys.addaudithook(watch)
sys.argv = ["nexo", *sys.argv[3:]]
main()
"""


def _loaded_by(names: set[str], modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` (or their submodules) are among the module ``names``."""
    return sorted(
        name for name in names if any(name == m or name.startswith(f"{m}.") for m in modules)
    )


def test_a_frozen_unsigned_sync_imports_no_cli_framework_nor_signing(
    *, tmp_path: Path, fleet_env: dict[str, str], registry: Registry, make_dist: MakeDist
) -> None:
    lock = _locked(tmp_path, registry, make_dist, fleet_env)
    for run in ("installs", "no-op"):
        modules = tmp_path / f"modules-{run}.txt"
        at_request = tmp_path / f"first-request-{run}.txt"
        arguments = ["plugin", "sync", "--lock", str(lock), "--dest", str(tmp_path / "root")]
        completed = subprocess.run(
            [
                sys.executable,
                "-c",
                _PROBE,
                str(modules),
                str(at_request),
                *arguments,
                "--frozen",
                "--plain-http",
            ],
            env=fleet_env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
        loaded = set(modules.read_text().split())
        assert "nexo_pkg.fleet.sync" in loaded
        assert "nexo_pkg.cli.syncing" in loaded
        assert [name for name in loaded if name.split(".")[0] in HEAVY] == []
        assert _loaded_by(loaded, NEVER) == []
        if run == "installs":
            # The thread that loaded each module (nexo-installer: the one that loads the
            # installer beside the downloads, never in the way of a request).
            before_request = dict(line.split() for line in at_request.read_text().splitlines())
            assert "nexo_pkg.sources.registry" in before_request
            on_the_way = {m for m, thread in before_request.items() if thread != "nexo-installer"}
            assert _loaded_by(on_the_way, AFTER_FIRST_REQUEST) == []
            assert "nexo_pkg.install.pipeline" in loaded  # the plugins were installed with it
        else:
            assert not at_request.exists()  # nothing to install: no request at all
            assert _loaded_by(loaded, (*AFTER_FIRST_REQUEST, *NETWORK, *INSTALLING)) == []
    assert sorted(path.name for path in (tmp_path / "root").iterdir() if path.name[0] != ".") == [
        "alpha-1.0.0",
        "bravo-1.1.0",
    ]
