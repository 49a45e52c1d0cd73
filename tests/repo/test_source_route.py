"""``sources/route.py`` is the one place that knows the kinds of source, and the faces of
``sources``, ``trust`` and ``net`` are what the rest of the package sees of them.

No module outside ``nexo_pkg/sources`` names a concrete source class, imports a kind's
module or compares with the ``type`` of a kind (``"github-releases"``, ``"oci-registry"``,
``"local-file"``: in a comparison, a ``match`` case or as a dict's key), so a new kind of
source is one line in :data:`~nexo_pkg.sources.route.KINDS` and its module; every face
resolves each name it lists, and costs nothing to import.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nexo_pkg.sources import route
from nexo_pkg.sources.base import Source

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"
SOURCE_CLASSES = {"GitHubSource", "GitHubReleaseSource", "OciSource", "LocalTarballSource"}
KIND_MODULES = {kind.load().__name__ for kind in route.KINDS}  # type: ignore[attr-defined]
KIND_TYPES = {kind.type for kind in route.KINDS}


def _kind_types(node: ast.AST | None) -> list[str]:
    """The kind types ``node`` is, or holds as a tuple, list or set of constants."""
    if isinstance(node, ast.Constant) and node.value in KIND_TYPES:
        return [str(node.value)]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [kind for element in node.elts for kind in _kind_types(element)]
    return []


def _compared_kinds(node: ast.AST) -> list[str]:
    """The kind types ``node`` compares with (``==``, ``in``, a ``match`` case) or keys a
    dict by."""
    if isinstance(node, ast.Compare):
        return [kind for operand in (node.left, *node.comparators) for kind in _kind_types(operand)]
    if isinstance(node, ast.MatchValue):
        return _kind_types(node.value)
    if isinstance(node, ast.Dict):
        return [kind for key in node.keys for kind in _kind_types(key)]
    return []


def _outside_sources() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "sources"
    ]


def _dispatches(path: Path) -> list[str]:
    """What in ``path`` names a kind of source: a concrete source class, a kind's module, or
    a kind's type compared with or keying a dict."""
    found: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        found.extend(f"l.{node.lineno}: {kind!r}" for kind in _compared_kinds(node))  # type: ignore[attr-defined]
        if isinstance(node, ast.Name) and node.id in SOURCE_CLASSES:
            found.append(f"l.{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in SOURCE_CLASSES:
            found.append(f"l.{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = {f"{node.module}.{alias.name}" for alias in node.names}
            for module in sorted(({node.module} | names) & KIND_MODULES):
                found.append(f"l.{node.lineno}: imports {module}")
            for alias in node.names:
                if alias.name in SOURCE_CLASSES:
                    found.append(f"l.{node.lineno}: imports {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in KIND_MODULES:
                    found.append(f"l.{node.lineno}: imports {alias.name}")
    return found


def test_only_the_route_dispatches_on_the_kind_of_a_source() -> None:
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in _outside_sources()
        if (hits := _dispatches(path))
    }
    assert found == {}


def test_the_check_catches_a_dispatch(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from nexo_pkg.sources.oci_source import OciSource\n"
        "from nexo_pkg.sources import releases\n"
        "def f(source: object) -> bool:\n"
        "    return isinstance(source, OciSource)\n",
        encoding="utf-8",
    )
    assert _dispatches(sample) == [
        "l.1: imports nexo_pkg.sources.oci_source",
        "l.1: imports OciSource",
        "l.2: imports nexo_pkg.sources.releases",
        "l.4: OciSource",
    ]


def test_the_check_catches_a_comparison_with_a_kind_type(tmp_path: Path) -> None:
    """A branch on the ``type`` an origin records is a dispatch too, however it is written;
    the same word elsewhere (a message, a docstring) is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(receipt: object, source: str) -> object:\n"
        '    if receipt.source == "github-releases":\n'
        "        return 1\n"
        '    if source in ("oci-registry", "other"):\n'
        "        return 2\n"
        "    match source:\n"
        '        case "local-file":\n'
        "            return 3\n"
        '    lookups = {"github-releases": f, "registry": f}\n'
        '    return "not from github-releases", lookups\n',
        encoding="utf-8",
    )
    assert sorted(_dispatches(sample)) == [
        "l.2: 'github-releases'",
        "l.4: 'oci-registry'",
        "l.7: 'local-file'",
        "l.9: 'github-releases'",
    ]


@pytest.mark.parametrize("kind", route.KINDS, ids=lambda kind: kind.type)
def test_every_kind_provides_what_the_route_asks_of_it(kind: route.Kind) -> None:
    module: Any = kind.load()
    assert kind.type == module.SOURCE_TYPE
    for name in ("open_text", "check_text", "reopen", "locked_origin", "prefetch_newest"):
        assert callable(getattr(module, name)), name
    classes = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and value.__module__ == module.__name__
    ]
    questions = [name for name in dir(Source) if not name.startswith("_")]
    assert any(all(callable(getattr(cls, q, None)) for q in questions) for cls in classes), (
        f"{module.__name__} has no class answering {questions}"
    )


@pytest.mark.parametrize("face", ["nexo_pkg.sources.api", "nexo_pkg.net.api", "nexo_pkg.trust.api"])
def test_every_name_of_a_face_resolves(face: str) -> None:
    module = importlib.import_module(face)
    homes = getattr(module, "_HOMES", None)
    if homes is not None:  # a lazy face: every name it lists has a home, and only those
        assert set(homes) == set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError):
        getattr(module, "no_such_name")  # noqa: B009 - the face's __getattr__ is the subject


def test_the_faces_load_no_network_client() -> None:
    """Importing the faces of ``sources``, ``net`` and ``trust`` (as ``install PATH`` and the
    CLI's options do) loads neither httpx nor the clients that bring it; asking for a client's
    name loads it."""
    heavy = (
        "httpx",
        "nexo_pkg.net.client",
        "nexo_pkg.sources.github",
        "nexo_pkg.sources.oci",
        "nexo_pkg.sources.oci_source",
        "nexo_pkg.sources.registry",
    )
    code = (
        "import sys\n"
        "import nexo_pkg.sources.api, nexo_pkg.net.api, nexo_pkg.trust.api\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "from nexo_pkg.sources.api import RegistryClient\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    before, after = done.stdout.splitlines()
    assert before == "[]"
    assert "'nexo_pkg.sources.registry'" in after
    assert "'httpx'" in after


def test_naming_an_origin_loads_no_kind_module() -> None:
    """``list`` names where each install came from through the route, which loads no kind's
    module for it (nor the sources face)."""
    kinds = sorted(KIND_MODULES | {"nexo_pkg.sources.api"})
    code = (
        "import sys\n"
        "from nexo_pkg.sources.route import origin_label\n"
        "origins = [\n"
        "    {'type': 'github-releases', 'owner': 'acme', 'repo': 'hello', 'tag': 'v1.0.0'},\n"
        "    {'type': 'oci-registry', 'registry': 'oci://h:5000/p/hello@sha256:' + 'a' * 64},\n"
        "    {'type': 'local-file'},\n"
        "]\n"
        "print([origin_label(origin, exact=True) for origin in origins])\n"
        f"print(sorted(m for m in {kinds!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    labels, loaded = done.stdout.splitlines()
    digest = "a" * 64
    assert labels == str(
        ["acme/hello@v1.0.0", f"oci://h:5000/p/hello@sha256:{digest}", "local file"]
    )
    assert loaded == "[]"


def test_an_origin_that_names_no_place_is_said_so_by_the_route() -> None:
    """``origin_place`` answers whether an origin names a place to install it again from:
    ``None`` for a file and for a registry copy that lost its reference, though that copy
    still records the release it was mirrored from (it came from the registry, not from
    GitHub); ``origin_label`` reads ``None`` as ``local file`` for a file's origin, and as
    ``origin unknown`` for one that names nothing known (``origin_known``: an unknown or empty
    ``type``, a kind's origin without its coordinates)."""
    from nexo_pkg.sources.route import origin_known, origin_label, origin_place

    pinned = "oci://h:5000/p/hello@sha256:" + "a" * 64
    copy = {"type": "oci-registry", "owner": "acme", "repo": "hello", "tag": "v1.0.0"}
    release = {"type": "github-releases", "owner": "acme", "repo": "hello", "tag": "v1.0.0"}
    assert origin_place({**copy, "registry": pinned}, exact=True) == pinned
    assert origin_place({**copy, "registry": pinned}) == "oci://h:5000/p/hello"
    assert origin_place(release, exact=True) == "acme/hello@v1.0.0"
    local = {"type": "local-file", "path": "/x.tar.gz"}
    unnamed_release = {**release, "owner": None, "repo": ""}
    for nameless in (copy, local, unnamed_release, {}, {"type": ""}, {"type": "new"}):
        assert origin_place(nameless) is None
        assert origin_place(nameless, exact=True) is None
        known = nameless is local
        assert origin_known(nameless) is known
        assert origin_label(nameless) == ("local file" if known else "origin unknown")
    assert origin_known(release)
    assert origin_known({**copy, "registry": pinned})
