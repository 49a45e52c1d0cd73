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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
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


def _text_leaves(value: Any) -> list[tuple[Any, ...]]:
    """The paths of ``value``'s free-text strings (names, versions, refs, purls, licences,
    properties), not its fixed words (formats, types, algorithms) or patterned ones."""
    fixed = {"$schema", "bomFormat", "specVersion", "serialNumber", "type", "alg", "timestamp"}
    return [
        path
        for path in _paths(value)
        if path and isinstance(path[-1], str) and path[-1] not in fixed
        and isinstance(_at(value, path), str)
    ]  # fmt: skip


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


_OLD_PURL = r"pkg:pypi/(?:[a-z0-9._-]|%[0-9A-Fa-f]{2})+@(?:[A-Za-z0-9._:-]|%[0-9A-Fa-f]{2})+"
_TEXTS = st.one_of(
    st.text(min_size=1, max_size=8),
    st.from_regex(_OLD_PURL, fullmatch=True),
    st.sampled_from(["urn:cdx:x", "\u00a0", "\u2028", "\U0001f600", "%41", "a\u0300", "(MIT"]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_texts_the_plain_shape_takes_the_library_reads(data: st.DataObject) -> None:
    """Differential over free text: up to three strings of a pack SBOM (a purl among them,
    percent escapes of blanks and ``/`` included) replaced at once; whatever the plain check
    takes, the strict validator and the library's reader take too, as ``sbom`` reads it."""
    document = json.loads(data.draw(st.sampled_from(pack_documents()[1:])))
    leaves = _text_leaves(document)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(leaves))
        *parent_path, last = path
        _at(document, tuple(parent_path))[last] = data.draw(_TEXTS)
    if not plainly_valid(document):
        return
    raw = json.dumps(document).encode()
    assert validate(raw) == []
    try:
        read_sbom(raw)
    except SbomError as exc:  # pragma: no cover - the failure is the finding
        pytest.fail(f"{json.dumps(document)[:2000]}: {exc}")


_BLANKS_IN_UTF8 = ["%C2%85", "%C2%A0", "%E1%9A%80", "%E2%80%A8", "%E2%80%AF", "%E3%80%80"]


def test_every_escape_in_a_purl_the_plain_shape_takes_the_library_reads() -> None:
    """Each byte escaped alone, before or after a plain character, in the name and in the
    version, and the UTF-8 blanks beyond ASCII: whatever purl the plain check takes, the
    library parses (packageurl strips what an escape of a blank or ``/`` decodes to and
    refuses a name left empty, so ``pkg:pypi/%09@0`` must go to the library)."""
    document = json.loads(pack_documents()[1])
    escapes = [f"%{byte:02X}" for byte in range(256)] + _BLANKS_IN_UTF8
    purls = [
        form.format(escape)
        for escape in escapes
        for form in ("pkg:pypi/{}@1", "pkg:pypi/a{}@1", "pkg:pypi/{}a@1", "pkg:pypi/a@{}")
    ]
    taken = 0
    for purl in purls:
        document["components"][0]["purl"] = purl
        if not plainly_valid(document):
            continue
        taken += 1
        try:
            read_sbom(json.dumps(document).encode())
        except SbomError as exc:  # pragma: no cover - the failure is the finding
            pytest.fail(f"{purl}: {exc}")
    assert taken > 256


@pytest.mark.daemon_host
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
