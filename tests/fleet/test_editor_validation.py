"""Editors validate nexo-plugins.toml and nexo-plugins.lock: the language server lints them
against their schemas, with ranges on the keys concerned, and explains their keys."""

from __future__ import annotations

from typing import Final

import pytest

from nexo_pkg.fleet.lockfile import Lock, LockedPlugin, LockedTarget, render_lock
from nexo_pkg.lsp.server import document_kind, lint_text, navigator_for

WANTED: Final = "nexo-plugins.toml"
LOCK: Final = "nexo-plugins.lock"


def test_the_fleet_files_are_documents_the_server_lints() -> None:
    assert document_kind("file:///srv/fleet/nexo-plugins.toml") == WANTED
    assert document_kind("file:///srv/fleet/nexo-plugins.lock") == LOCK
    assert document_kind("file:///srv/fleet/other.toml") is None


@pytest.mark.parametrize(
    ("text", "code", "key_path", "line"),
    [
        ('[plugins.echo]\nsource = "acme/echo"\ncolour = 1\n', "NX011", "plugins.echo.colour", 3),
        ('[plugins.echo]\nversion = "^1"\n', "NX010", "plugins.echo", 1),
        ('[plugins.echo]\nsource = "acme/echo"\ntargets = ["x y"]\n', "NX013",
         "plugins.echo.targets[0]", 3),
        ('[plugins.echo]\nsource = 3\n', "NX012", "plugins.echo.source", 2),
        ('[plugins.echo]\nsource = "acme/echo\n', "NX001", "", 2),
    ],
)  # fmt: skip
def test_a_bad_wanted_set_gets_a_diagnostic_on_its_key(
    text: str, code: str, key_path: str, line: int
) -> None:
    found = lint_text(WANTED, text, "/srv/fleet/nexo-plugins.toml")
    assert [(d.code, d.key_path, d.span.start.line) for d in found] == [(code, key_path, line)]


def test_a_lock_nexo_pkg_wrote_is_clean_and_a_hand_edit_is_not() -> None:
    lock = Lock()
    lock.plugins["echo"] = LockedPlugin(
        "echo", "acme/echo", "*", None, "1.0.0", "acme/echo@v1.0.0",
        {"noarch": LockedTarget("noarch", "echo-1.0.0-noarch.tar.gz", 10, "a" * 64)},
    )  # fmt: skip
    text = render_lock(lock)
    assert lint_text(LOCK, text, "/srv/fleet/nexo-plugins.lock") == ()
    edited = text.replace("size = 10", 'size = "ten"')
    found = lint_text(LOCK, edited, "/srv/fleet/nexo-plugins.lock")
    assert [(d.code, d.key_path) for d in found] == [("NX012", "plugins.echo.targets.noarch.size")]
    assert found[0].span.start.line == edited.splitlines().index('size = "ten"') + 1


def test_keys_of_the_fleet_files_have_descriptions_for_hover() -> None:
    wanted = navigator_for(WANTED)
    assert wanted is not None
    info = wanted.key_info(("plugins", "echo", "version"))
    assert info is not None
    assert "requirement" in info.markdown()
    lock = navigator_for(LOCK)
    assert lock is not None
    sha = lock.key_info(("plugins", "echo", "targets", "noarch", "sha256"))
    assert sha is not None
    assert "sync refuses any other bytes" in sha.markdown()
