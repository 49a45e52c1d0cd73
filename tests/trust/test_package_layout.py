"""The trust package's imports point one way: verifiers build on the shared base only."""

from __future__ import annotations

import ast
from pathlib import Path

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
