"""Host requirements of ``[plugin.requires]`` / ``[plugin.contracts]`` against the daemon.

At boot the daemon compares only ``requires.nexo_capabilities``: a name it has not wired is a
``Warn`` diagnostic (``RequiredCapabilityNotGranted``) and the plugin is still loaded
(``crates/core/src/agent/nexo_plugin_registry/capability_aggregator.rs:148-163``; its doctor
exits 0 on warnings, ``doctor_render.rs:36-55``). It wires ``broker``, ``memory`` and
``sessions`` always, ``long_term_memory`` when ``memory.yaml`` sets ``long_term.backend``
(``src/main.rs:6903-6916``). ``requires.bins``/``env``/``features`` and ``[plugin.contracts]``
are read by no code of its plugin registry. So ``install`` and ``doctor`` warn, never refuse.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from support.cli import nexo
from support.github_server import GitHubServer
from support.stand_in import CLEARED, use_stand_in
from support.tarballs import asset_name, manifest_text, plugin_tarball, release_assets, write_plugin

plugin = partial(nexo, "plugin", in_process=True)

UNKNOWN = '\n[plugin.requires]\nnexo_capabilities = ["vector_store", "broker"]\n'
MET = '\n[plugin.requires]\nnexo_capabilities = ["broker", "memory", "sessions"]\n'
UNCHECKED = (
    '\n[plugin.requires]\nbins = ["definitely-not-a-binary-xyz"]\nenv = ["UNSET_VAR_XYZ_123"]\n'
    'features = ["nope"]\n\n[plugin.contracts]\nconsumes = ["no.such.contract/v9"]\n'
)
LONG_TERM = '\n[plugin.requires]\nnexo_capabilities = ["long_term_memory"]\n'
ALWAYS_WIRED = ["broker", "memory", "sessions"]
ALL_WIRED = ["broker", "long_term_memory", "memory", "sessions"]


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubServer]:
    """The stand-in, with the CLI pointed at it and a fresh ``NEXO_HOME``."""
    with GitHubServer() as running:
        cleared = (*CLEARED, "NEXO_CONFIG_DIR", "UNSET_VAR_XYZ_123")
        use_stand_in(monkeypatch, tmp_path, running, cleared=cleared)
        yield running


def _publish(server: GitHubServer, extra: str) -> None:
    text = manifest_text("hello", "1.0.0", extra=extra)
    assets = release_assets("hello", "1.0.0", data=plugin_tarball("hello", "1.0.0", manifest=text))
    assets["nexo-plugin.toml"] = text.encode()
    server.publish("acme", "hello", "v1.0.0", assets)


def _install(*args: str) -> tuple[int, dict[str, object], str]:
    result = plugin("install", *args, "--yes", "--json", "--dest", "plugins")
    assert "Traceback" not in result.stderr
    return result.code, json.loads(result.stdout), result.stderr


def test_an_unwired_capability_installs_with_a_warning(server: GitHubServer) -> None:
    """capability_aggregator.rs:148-163: an unwired name warns, the plugin is loaded; so the
    install goes ahead (exit 0), naming the requirement, its value and why."""
    _publish(server, UNKNOWN)
    code, document, stderr = _install("acme/hello", "--nexo-version", "0.2.1")
    assert code == 0, stderr
    assert (Path("plugins") / "hello-1.0.0").is_dir()
    assert document["manifest"]["host_requirements"] == [  # type: ignore[index]
        {
            "requirement": "requires.nexo_capabilities",
            "value": "vector_store",
            "why": "no daemon wires a capability of that name (it wires broker, memory, "
            "sessions, and long_term_memory when memory.yaml sets long_term.backend)",
        }
    ]
    warnings = document["warnings"]
    assert isinstance(warnings, list)
    assert [w for w in warnings if "vector_store" in w and "RequiredCapabilityNotGranted" in w]
    assert not [w for w in warnings if "`broker`" in w]


def test_met_and_unchecked_requirements_install_silently(server: GitHubServer) -> None:
    """broker/memory/sessions are always wired (src/main.rs:6903-6916); bins, env, features
    and contracts are read by no code of the daemon's plugin registry, so nothing is said."""
    _publish(server, MET + UNCHECKED.replace("[plugin.requires]\n", ""))
    code, document, stderr = _install("acme/hello")
    assert code == 0, stderr
    assert document["manifest"]["host_requirements"] == []  # type: ignore[index]
    warnings = document["warnings"]
    assert isinstance(warnings, list)
    assert [w for w in warnings if "plugin.requires" in w or "contract" in w] == []
    assert "plugin.requires" not in stderr


def test_a_local_tarball_warns_from_its_own_manifest(server: GitHubServer, tmp_path: Path) -> None:
    """Same rule (capability_aggregator.rs:148-163) for an archive without a manifest asset:
    the warning is on stderr without --json too."""
    data = plugin_tarball("hello", "1.0.0", manifest=manifest_text("hello", "1.0.0", extra=UNKNOWN))
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=data)
    result = plugin("install", str(tarball), "--yes", "--dest", "plugins")
    assert result.code == 0, result.stderr
    assert "vector_store" in result.stderr
    assert (Path("plugins") / "hello-1.0.0").is_dir()


def _doctor(*args: str) -> tuple[int, list[dict[str, object]], object]:
    """Exit code, the ``requires`` findings and the ``wired_capabilities`` of the report."""
    result = plugin("doctor", "--dest", "plugins", "--no-check", "--json", *args)
    assert "Traceback" not in result.stderr
    document = json.loads(result.stdout)
    found = [f for f in document["findings"] if f["check"] == "requires"]
    return result.code, found, document["wired_capabilities"]


def _install_local(tmp_path: Path, extra: str) -> None:
    data = plugin_tarball("hello", "1.0.0", manifest=manifest_text("hello", "1.0.0", extra=extra))
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0", data=data)
    assert plugin("install", str(tarball), "--yes", "--dest", "plugins").code == 0


def test_doctor_warns_of_an_unwired_capability(server: GitHubServer, tmp_path: Path) -> None:
    """The daemon's doctor lists RequiredCapabilityNotGranted at Warn level and exits 0
    (capability_aggregator.rs:148-163, doctor_render.rs:36-55): so does this one."""
    _install_local(tmp_path, UNKNOWN)
    code, found, _ = _doctor()
    assert code == 0
    assert [(f["severity"], f["id"]) for f in found] == [("warning", "hello")]
    assert "vector_store" in str(found[0]["message"])


@pytest.mark.parametrize(
    ("memory_yaml", "wired"),
    [
        ("short_term: {}\nlong_term:\n  backend: sqlite\n", ALL_WIRED),
        ("short_term: {}\nlong_term:\n  backend: ''\n", ALWAYS_WIRED),
        (None, None),
        ("short_term: {}\nlong_term: {}\n", ALL_WIRED),
        ("short_term: {}\n", None),
        ("long_term: [unclosed\n", None),
        ("long_term:\n  backend: ${UNSET_VAR_XYZ_123}\n", None),
    ],
    ids=[
        "backend-set",
        "backend-empty",
        "no-memory-yaml",
        "backend-default",
        "no-long-term",
        "not-yaml",
        "unset-variable",
    ],
)
def test_doctor_decides_long_term_memory_from_memory_yaml(
    server: GitHubServer, tmp_path: Path, memory_yaml: str | None, wired: list[str] | None
) -> None:
    """long_term_memory is wired when memory.yaml's long_term.backend is non-empty
    (src/main.rs:6912-6914), ``sqlite`` when left out (crates/config/src/types/memory.rs:
    215-224); without a memory.yaml the daemon can load it does not boot
    (crates/config/src/lib.rs:70), so nothing is decided and the doctor still reports."""
    config = tmp_path / "config"
    config.mkdir()
    if memory_yaml is not None:
        (config / "memory.yaml").write_text(memory_yaml)
    _install_local(tmp_path, LONG_TERM)
    code, found, reported = _doctor("--config", str(config))
    assert code == 0
    assert reported == wired
    unmet = wired is not None and "long_term_memory" not in wired
    assert [f["id"] for f in found] == (["hello"] if unmet else [])
    if unmet:
        assert "long_term.backend" in str(found[0]["message"])


def test_the_tarball_is_downloaded_since_nothing_is_refused(server: GitHubServer) -> None:
    """No host requirement is a refusal at the daemon's boot, so none stops the download."""
    _publish(server, UNKNOWN)
    code, _, stderr = _install("acme/hello")
    assert code == 0, stderr
    name = asset_name("hello", "1.0.0")
    assert any(asset.name == name for _, asset in server.assets.values())
    assert any(
        request.path.endswith(f"/assets/{asset_id}") or request.path.endswith(name)
        for asset_id, (_, asset) in server.assets.items()
        if asset.name == name
        for request in server.requests
    )


def test_sync_warns_about_an_unwired_capability_as_install_does(
    server: GitHubServer, tmp_path: Path
) -> None:
    """A fleet gets the warning an install gives: sync installs the plugin (the daemon loads
    it) and says which capability it would not find, with --json as a ``warnings`` list of
    the plugin's outcome and on stderr."""
    _publish(server, UNKNOWN)
    (tmp_path / "nexo-plugins.toml").write_text('[plugins.hello]\nsource = "acme/hello"\n')
    synced = plugin("sync", "--lock", str(tmp_path / "nexo-plugins.lock"), "--dest",
                    str(tmp_path / "root"), "--json")  # fmt: skip
    assert synced.code == 0, synced.stderr
    (outcome,) = synced.document["plugins"]
    assert outcome["action"] == "installed"
    assert [w for w in outcome["warnings"] if "vector_store" in w]
    (line,) = [line for line in synced.stderr.splitlines() if "vector_store" in line]
    assert line.startswith("warning: hello: [plugin.requires] nexo_capabilities `vector_store`")
    (unsigned,) = [line for line in synced.stderr.splitlines() if "NOT SIGNED" in line]
    assert unsigned.startswith("WARNING: hello-1.0.0-")
