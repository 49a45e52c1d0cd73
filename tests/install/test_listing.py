"""The listing model (``install/listing.py``) built from real installs in a temporary plugin
root: plugins with their receipts, a hold, a version kept for rollback, a development link,
an unreadable receipt and a directory without one; and ``nexo plugin list`` printing exactly
its rows and its document."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import clean_env, nexo
from support.tarballs import manifest_text, plugin_tarball, release_assets, write_plugin

from nexo_pkg.install.discovery_edit import DiscoveryState, discovery_state
from nexo_pkg.install.hold import set_hold
from nexo_pkg.install.link import link_install
from nexo_pkg.install.listing import Listing, ListingRow, build_listing
from nexo_pkg.install.pipeline import install, upgrade
from nexo_pkg.install.receipts import RECEIPT_NAME, scan_roots

from .conftest import InstallEnv


def _installed(env: InstallEnv, tmp_path: Path, plugin_id: str, version: str) -> Path:
    tarball = write_plugin(
        tmp_path / "dist", plugin_id, version, data=plugin_tarball(plugin_id, version)
    )
    return Path(install(str(tarball), env.make_options()).path)


@pytest.fixture
def root(install_env: InstallEnv, tmp_path: Path) -> Path:
    """alpha 1.0.0 from a local file; beta from a GitHub release, upgraded from 1.0.0 to 2.0.0
    (1.0.0 kept) and held; a link to the
    checkout gamma 0.3.0; broken-1.0.0 with an unreadable receipt; stray without one."""
    dest = install_env.dest
    _installed(install_env, tmp_path, "alpha", "1.0.0")
    install_env.server.publish("acme", "beta", "v1.0.0", release_assets("beta", "1.0.0"))
    install("acme/beta", install_env.make_options())
    install_env.server.publish("acme", "beta", "v2.0.0", release_assets("beta", "2.0.0"))
    upgraded = upgrade("beta", install_env.make_options())
    assert upgraded.install is not None
    assert upgraded.kept
    set_hold(dest, "beta", "2.0.0", reason="hold")
    checkout = tmp_path / "gamma-checkout"
    checkout.mkdir()
    (checkout / "nexo-plugin.toml").write_text(manifest_text("gamma", "0.3.0"))
    link_install(checkout, dest, follow_symlinks=True)
    (dest / "broken-1.0.0").mkdir()
    (dest / "broken-1.0.0" / RECEIPT_NAME).write_text("{}")
    (dest / "stray").mkdir()
    return dest


def _listing(dest: Path, states: DiscoveryState | None) -> Listing:
    return build_listing((dest,), scan_roots((dest,), kept=True), states)


def test_rows_name_each_plugin_its_origin_and_what_the_daemon_does(
    root: Path, tmp_path: Path
) -> None:
    listing = _listing(root, DiscoveryState(disabled=("alpha",)))
    kept = next(item.path for item, receipt in listing.plugins if item.kept)
    assert listing.rows(include_orphan=False) == [
        ListingRow("alpha", "1.0.0", "local file", "unsigned", "disabled", root / "alpha-1.0.0"),
        ListingRow(
            "beta", "2.0.0", "acme/beta@v2.0.0", "unsigned", "enabled,held", root / "beta-2.0.0"
        ),
        ListingRow("beta", "1.0.0", "acme/beta@v1.0.0", "unsigned", "kept", kept),
        ListingRow(
            "gamma",
            "0.3.0",
            f"link: {tmp_path / 'gamma-checkout'}",
            "-",
            "enabled,linked",
            root / "gamma",
        ),
        ListingRow(
            "(orphan)",
            "",
            "receipt unreadable: missing field `schema_version`",
            "",
            "",
            root / "broken-1.0.0",
        ),
    ]
    orphans = [row for row in listing.rows(include_orphan=True) if row.plugin == "(orphan)"]
    assert [row.path for row in orphans] == [root / "broken-1.0.0", root / "stray"]
    assert orphans[1].origin == "no install receipt"


def test_an_unreadable_discovery_configuration_leaves_the_state_unknown(root: Path) -> None:
    rows = _listing(root, None).rows(include_orphan=False)
    assert [row.state for row in rows] == ["unknown", "unknown,held", "kept", "linked", ""]
    document = _listing(root, None).to_json(include_orphan=False)
    assert {plugin["discovery"] for plugin in document["plugins"]} == {None}


def test_the_document_holds_every_plugin_link_and_unreadable_receipt(root: Path) -> None:
    document = _listing(root, DiscoveryState(allowlist=("beta",))).to_json(include_orphan=False)
    assert list(document) == ["ok", "dest", "roots", "unreadable", "plugins"]
    assert (document["dest"], document["roots"]) == (str(root), [str(root)])
    assert document["unreadable"] == [
        {
            "path": str(root / "broken-1.0.0"),
            "problem": "receipt unreadable: missing field `schema_version`",
        }
    ]
    shown = [
        (each["id"], each["version"], each["kept"], each.get("held"), each["discovery"])
        for each in document["plugins"]
    ]
    assert shown == [
        ("alpha", "1.0.0", False, False, "not-allowlisted"),
        ("beta", "2.0.0", False, True, "enabled"),
        ("beta", "1.0.0", True, False, "enabled"),
        ("gamma", "0.3.0", False, None, "not-allowlisted"),
    ]
    alpha = document["plugins"][0]
    assert (alpha["source"], alpha["signature"], alpha["path"]) == (
        "local-file",
        "unsigned",
        str(root / "alpha-1.0.0"),
    )
    assert document["plugins"][3]["linked_to"].endswith("gamma-checkout")
    with_orphans = _listing(root, None).to_json(include_orphan=True)
    assert [orphan["path"] for orphan in with_orphans["orphans"]] == [
        str(root / "broken-1.0.0"),
        str(root / "stray"),
    ]


def test_a_root_with_only_a_stray_directory_is_empty_unless_orphans_are_asked(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plugins"
    assert _listing(root, None).is_empty(include_orphan=True)
    (root / "stray").mkdir(parents=True)
    listing = _listing(root, None)
    assert listing.is_empty(include_orphan=False)
    assert not listing.is_empty(include_orphan=True)


def test_the_command_prints_the_rows_and_the_document_of_the_model(
    root: Path, install_env: InstallEnv, tmp_path: Path
) -> None:
    config = tmp_path / "config"
    (config / "plugins").mkdir(parents=True)
    (config / "plugins" / "discovery.yaml").write_text(
        f"discovery:\n  search_paths: ['{root}']\n  disabled: [alpha]\n"
    )
    env = clean_env(NEXO_HOME=str(install_env.home))
    listing = _listing(root, discovery_state(config))
    assert listing.states == DiscoveryState(disabled=("alpha",))
    text = nexo("plugin", "list", "--config", str(config), env=env, in_process=True)
    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines() == [
        f"{row.plugin:<24} {row.version:<12} {row.origin:<40} {row.signature:<10} "
        f"{row.state:<16} {row.path}"
        for row in listing.rows(include_orphan=False)
    ]
    document = nexo("plugin", "list", "--config", str(config), "--json", env=env, in_process=True)
    assert document.document == listing.to_json(include_orphan=False)


def test_only_the_document_reads_vendored_distributions(root: Path) -> None:
    """The rows never import the SBOM reader (and the email parser it brings); the document
    does, for its ``vendored`` summaries."""
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from nexo_pkg.install.listing import build_listing\n"
        "from nexo_pkg.install.receipts import scan_roots\n"
        "roots = (Path(sys.argv[1]),)\n"
        "listing = build_listing(roots, scan_roots(roots, kept=True), None)\n"
        "rows = listing.rows(include_orphan=True)\n"
        "print(len(rows), 'nexo_pkg.install.sbom' in sys.modules)\n"
        "listing.to_json(include_orphan=True)\n"
        "print('nexo_pkg.install.sbom' in sys.modules)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", program, str(root)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert ran.stdout.split() == ["6", "False", "True"]


def test_an_orphan_is_listed_with_the_id_and_version_its_manifest_gives(tmp_path: Path) -> None:
    # The daemon loads a plugin directory without a receipt all the same (the reference's
    # `list --include-orphan` names it by its manifest); one whose manifest is no regular
    # file, or says nothing, is listed without them, and nothing blocks on a FIFO.
    root = tmp_path / "plugins"
    (root / "weather-1.0.0").mkdir(parents=True)
    (root / "weather-1.0.0" / "nexo-plugin.toml").write_text(manifest_text("weather", "1.0.0"))
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "nexo-plugin.toml")
    (root / "linked").mkdir()
    (root / "linked" / "nexo-plugin.toml").symlink_to(root / "weather-1.0.0" / "nexo-plugin.toml")
    (root / "stray").mkdir()
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    document = nexo("plugin", "list", "--dest", root, "--include-orphan", "--json", env=env)
    assert document.code == 0, document.stderr
    orphans = document.document["orphans"]
    assert [(o["id"], o["version"], Path(o["path"]).name) for o in orphans] == [
        (None, None, "fifo"),
        (None, None, "linked"),
        (None, None, "stray"),
        ("weather", "1.0.0", "weather-1.0.0"),
    ]
    text = nexo("plugin", "list", "--dest", root, "--include-orphan", env=env)
    assert text.code == 0, text.stderr
    rows = {line.split("  ")[0].strip(): line for line in text.stdout.splitlines()}
    assert "1.0.0" in rows["(orphan) weather"]
    assert rows["(orphan) weather"].endswith(str(root / "weather-1.0.0"))
