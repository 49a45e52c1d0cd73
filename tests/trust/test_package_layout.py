"""The trust package's imports point one way: verifiers build on the shared base only."""

from __future__ import annotations

import ast
import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

import nexo_pkg.trust

PACKAGE = Path(nexo_pkg.trust.__file__).parent
BASE_MODULES = {
    "nexo_pkg.core.errors",
    "nexo_pkg.core.files",
    "nexo_pkg.trust.verifiers.claims",
    "nexo_pkg.trust.base",
    "nexo_pkg.trust.policy",
    "nexo_pkg.trust.verifiers.common",
    "nexo_pkg.trust.verifiers.rootkeys",
}


def _module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE.parent.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every ``nexo_pkg`` module ``path`` imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("nexo_pkg"):
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                is_module = (
                    (PACKAGE.parent.parent / candidate.replace(".", "/"))
                    .with_suffix(".py")
                    .exists()
                )
                found.add(candidate if is_module else node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("nexo_pkg"))
    return found


def _graph() -> dict[str, set[str]]:
    return {_module_name(path): _imports(path) for path in PACKAGE.rglob("*.py")}


def test_verifiers_depend_only_on_the_shared_base() -> None:
    for module, imported in _graph().items():
        if not module.startswith("nexo_pkg.trust.verifiers.") or module in BASE_MODULES:
            continue
        assert imported <= BASE_MODULES, (module, imported - BASE_MODULES)


def test_no_import_cycle_inside_the_trust_package() -> None:
    graph = _graph()

    def visit(module: str, path: tuple[str, ...]) -> None:
        for target in graph.get(module, set()):
            assert target not in path, " -> ".join((*path, target))
            visit(target, (*path, target))

    for module in graph:
        visit(module, (module,))


def test_trust_never_imports_the_install_or_cli_layers() -> None:
    for module, imported in _graph().items():
        above = {name for name in imported if name.startswith(("nexo_pkg.install", "nexo_pkg.cli"))}
        assert not above, (module, above)


SIGSTORE_DISTRIBUTIONS = ("sigstore", "sigstore_models")


def _private_sigstore_names(source: str) -> set[str]:
    """The private parts of sigstore-python (a name that starts with ``_``) ``source`` imports:
    ``from sigstore._internal… import``, ``import sigstore._utils``,
    ``from sigstore import _internal``, or the same named in a string for ``importlib``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value]
        for name in names:
            parts = name.split(".")
            if parts[0] in SIGSTORE_DISTRIBUTIONS and any(p.startswith("_") for p in parts[1:]):
                found.add(name)
    return found


def test_sigstore_is_used_through_its_public_api_only() -> None:
    """A minor release of sigstore-python may change its private modules: no module of the
    package reaches into them (the legacy cosign checks use ``cryptography`` directly)."""
    root = PACKAGE.parent
    private = {
        f"{path.relative_to(root.parent)}: {name}"
        for path in root.rglob("*.py")
        for name in _private_sigstore_names(path.read_text(encoding="utf-8"))
    }
    assert not private, sorted(private)


def test_the_scan_for_private_sigstore_names_sees_every_spelling() -> None:
    source = (
        "from sigstore._internal.rekor import x\n"
        "import sigstore._utils\n"
        "from sigstore import _internal\n"
        "import importlib\nimportlib.import_module('sigstore_models._core')\n"
        "from sigstore.verify import Verifier\n"
    )
    assert {name.split(".")[1] for name in _private_sigstore_names(source)} == {
        "_internal",
        "_utils",
        "_core",
    }


def test_sigstore_is_pinned_to_the_minor_series_tested() -> None:
    """Until no private API is left to break, a new minor release of sigstore-python is taken
    only on purpose: the declared range holds the installed (tested) release and no later
    minor series."""
    project = tomllib.loads((PACKAGE.parent.parent / "pyproject.toml").read_text("utf-8"))
    (declared,) = [
        Requirement(line)
        for line in project["project"]["dependencies"]
        if Requirement(line).name == "sigstore"
    ]
    installed = version("sigstore")
    major, minor = (int(part) for part in installed.split(".")[:2])
    assert declared.specifier.contains(installed), (declared, installed)
    assert not declared.specifier.contains(f"{major}.{minor + 1}.0"), declared
    assert not declared.specifier.contains(f"{major + 1}.0.0"), declared
