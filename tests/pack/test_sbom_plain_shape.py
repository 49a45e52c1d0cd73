"""The SBOM shape ``install`` takes without loading the CycloneDX schema or library
(``nexo_pkg.sbom.plainly_valid``): every document ``pack`` writes has it, and every document
that has it is valid CycloneDX 1.6 that the library reads back, as ``nexo plugin sbom`` reads
it. Anything else is judged by the library at install."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli import clean_env
from support.tarballs import file, plugin_members, targz, write_plugin

from nexo_pkg.sbom import SbomError, plainly_valid, quick_check
from nexo_pkg.sbom.cyclonedx import PluginSbom, read_sbom, validate, write_sbom
from nexo_pkg.sbom.inventory import Package, Requirement

EPOCH = 1_700_000_000


def _packages() -> tuple[Package, ...]:
    return (
        Package(
            "anyio",
            "4.16.0",
            "lib/anyio-4.16.0.dist-info",
            ("MIT",),
            True,
            sha256="a" * 64,
            requires=(Requirement("idna"), Requirement("typing-extensions")),
            requested=True,
        ),
        Package("idna", "3.20", "lib/idna-3.20.dist-info", ("BSD-3-Clause", "Other"), False),
        Package("typing_extensions", "4.16.0", "lib/t.dist-info", (), False, sha256="b" * 64),
        Package("Zope.Event_Hub", "1!2.0+local.1", "lib/z.dist-info", ("ZPL 2.1",), False),
        Package("caf\u00e9", "1.0", "lib/cafe.dist-info", ("MIT OR Apache-2.0",), True),
    )


def pack_documents() -> list[bytes]:
    """SBOMs as ``pack`` writes them: root only, and with packages of every shape."""
    return [
        write_sbom(PluginSbom("demo", "0.1.0", "noarch", (), epoch=EPOCH, files_sha256="0" * 64)),
        write_sbom(
            PluginSbom(
                "demo",
                "1.2.3-rc.1",
                "x86_64-unknown-linux-gnu",
                _packages(),
                epoch=EPOCH,
                files_sha256="1" * 64,
            )
        ),
        write_sbom(PluginSbom("demo", "0.1.0", "noarch", _packages()[:2], epoch=0)),
    ]


def test_every_sbom_pack_writes_has_the_plain_shape() -> None:
    for data in pack_documents():
        document = json.loads(data)
        assert validate(data) == []
        root = document["metadata"]["component"]
        assert plainly_valid(quick_check(data, root["name"], root["version"]))


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def _mutations(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each path of ``document`` removed, replaced by values of other types and forms, given
    a stray key, or (a list item) repeated."""
    replacements: list[Any] = [None, 5, 1.5, True, "", "x", "a\nb", "\u202e", [], {}, "0" * 63]
    for path in _paths(document):
        if not path:
            continue
        *parent_path, last = path
        for how in ["delete", "repeat", "stray", *range(len(replacements))]:
            changed = copy.deepcopy(document)
            parent: Any = changed
            for step in parent_path:
                parent = parent[step]
            target = parent[last]
            if how == "delete":
                del parent[last]
            elif how == "repeat":
                if not isinstance(parent, list):
                    continue
                parent.append(copy.deepcopy(target))
            elif how == "stray":
                if not isinstance(target, dict):
                    continue
                target["stray"] = "x"
            else:
                parent[last] = replacements[int(how)]
            yield f"{'/'.join(map(str, path))} {how}", changed


@pytest.mark.parametrize("index", range(3))
def test_what_has_the_plain_shape_is_valid_and_read_by_the_library(index: int) -> None:
    """Differential: over every one-step change of a pack SBOM, whatever passes the plain
    check passes the library's strict validator and its reader too."""
    document = json.loads(pack_documents()[index])
    tried = accepted = 0
    for label, changed in _mutations(document):
        tried += 1
        if not plainly_valid(changed):
            continue
        accepted += 1
        data = json.dumps(changed, sort_keys=True, indent=2).encode()
        assert validate(data) == [], label
        try:
            read_sbom(data)
        except SbomError as exc:  # pragma: no cover - the failure is the finding
            pytest.fail(f"{label}: {exc}")
    assert tried > 100
    assert 0 < accepted < tried


def test_installing_a_pack_sbom_loads_neither_the_schema_nor_the_library(
    tmp_path: Path,
) -> None:
    """The plain shape spares ``install`` the schema and the library (SPEC §5's tiny-plugin
    budget); an SBOM of another shape loads them to be judged (``-X importtime`` of the real
    command)."""
    pack_sbom = write_sbom(PluginSbom("hello", "1.0.0", "noarch", _packages(), epoch=EPOCH))
    other = json.loads(pack_sbom)
    other["components"][0]["description"] = "a package"
    loaded = {}
    for name, data in [("pack", pack_sbom), ("other", json.dumps(other).encode())]:
        directory = tmp_path / name
        directory.mkdir()
        members = [*plugin_members("hello", "1.0.0"), file("sbom.cdx.json", data)]
        tarball = write_plugin(directory, "hello", "1.0.0", data=targz(members))
        completed = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "nexo_pkg", "plugin", "install",
             tarball, "--dest", directory / "root", "--yes", "-q"],
            env=clean_env(NEXO_HOME=str(directory / "home")),
            capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr
        assert (directory / "root" / "hello-1.0.0" / "sbom.cdx.json").read_bytes() == data
        modules = {
            line.split("|")[-1].strip().split(".")[0]
            for line in completed.stderr.splitlines()
            if line.startswith("import time:")
        }
        loaded[name] = sorted(modules & {"cyclonedx", "jsonschema"})
    assert loaded == {"pack": [], "other": ["cyclonedx", "jsonschema"]}
