"""An import-linter contract type: no module uses another package's ``_private`` names.

``lint-imports`` loads it from the repository root (``[tool.importlinter] contract_types``).
A name is private when it starts with one underscore (dunders are public). Using it means
``from package.module import _name`` or ``module._name`` on an imported module, from a module
outside ``package``: the floors contract keeps the direction of imports, this one keeps rooms
to each other's public names.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import grimp
from importlinter import Contract, ContractCheck, fields, output


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _package_of(module: str) -> str:
    return module.rsplit(".", 1)[0] if "." in module else module


def _outside(importer: str, owner: str) -> bool:
    """Whether ``importer`` lies outside package ``owner``."""
    return not (importer == owner or importer.startswith(owner + "."))


def _source_file(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def private_uses(module: str, modules: set[str]) -> list[tuple[int, str]]:
    """``(line, text)`` of each use in ``module`` of a private name that one of ``modules`` in
    another package owns (third-party private names are not this contract's business)."""
    path = _source_file(module)
    if path is None:
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in modules:
                    aliases[alias.asname or alias.name] = full
                elif (
                    _is_private(alias.name)
                    and node.module in modules
                    and _outside(module, _package_of(node.module))
                ):
                    found.append((node.lineno, f"from {node.module} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and _is_private(node.attr)
        ):
            owner = aliases[node.value.id]
            if _outside(module, _package_of(owner)):
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return found


class PrivateNamesContract(Contract):
    """Modules of ``containers`` use no private name of a module outside their own package."""

    type_name = "private_names"

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        containers = [str(container) for container in self.containers]  # type: ignore[attr-defined]
        modules = {
            module
            for module in graph.modules
            if any(module == c or module.startswith(c + ".") for c in containers)
        }
        violations = [
            (module, line, text)
            for module in sorted(modules)
            for line, text in private_uses(module, modules)
        ]
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error("Private names used outside their package:", bold=False)
        output.new_line()
        for module, line, text in check.metadata["violations"]:
            output.print_error(f"- {module} (l.{line}): {text}", bold=False)
        output.new_line()


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


class FacesContract(Contract):
    """Modules outside a package with a face (``faces``: ``package.api``) import nothing of
    that package but its face. ``allow`` lists ``importer -> imported`` exceptions (an
    importer or imported name covers its submodules), each with its reason in the
    configuration."""

    type_name = "faces"

    faces = fields.ListField(subfield=fields.StringField())
    allow = fields.ListField(subfield=fields.StringField(), required=False)
    broken_contract_guidance = fields.StringField(required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        faces = [str(face) for face in self.faces]  # type: ignore[attr-defined]
        allowed = [
            tuple(part.strip() for part in str(rule).split("->"))
            for rule in (self.allow or [])  # type: ignore[attr-defined]
        ]
        violations: list[tuple[str, str, int | None]] = []
        for face in faces:
            package = _package_of(face)
            inner = {m for m in graph.modules if _within(m, package) and m not in {face, package}}
            for imported in sorted(inner):
                for importer in sorted(graph.find_modules_that_directly_import(imported)):
                    if _within(importer, package) or any(
                        _within(importer, rule[0]) and _within(imported, rule[1])
                        for rule in allowed
                    ):
                        continue
                    details = graph.get_import_details(importer=importer, imported=imported)
                    line = details[0]["line_number"] if details else None
                    violations.append((importer, imported, line))
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        output.print_error("Imports past a package's face (import its api module):", bold=False)
        output.new_line()
        for importer, imported, line in check.metadata["violations"]:
            output.print_error(f"- {importer} (l.{line}) imports {imported}", bold=False)
        output.new_line()
        guidance = self.broken_contract_guidance  # type: ignore[attr-defined]
        if guidance:
            output.print_error(str(guidance), bold=False)
            output.new_line()
