"""A command of ``nexo_pkg/cli`` reaches each use-case package through one import at most.

The use-case packages are the floors between the CLI and the services (``fleet``; ``install``,
``pack``, ``check``, ``lsp``, ``scaffold``: read from the floors contract of pyproject.toml).
``install`` and ``fleet`` have lazy faces (``api.py``), which a command module imports once at
its top; a command that needs another package imports it once in its body. Five narrow
imports of one package in a command (and its nested functions) are what this keeps out.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "nexo_pkg" / "cli"


def _use_case_packages() -> set[str]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(contract for contract in contracts if contract["id"] == "floors")["layers"]
    # Under `__main__` and `cli`: the two floors of use cases.
    return {name.strip() for layer in layers[2:4] for name in layer.split("|")}


USE_CASES = _use_case_packages()


def _registered(tree: ast.Module) -> list[ast.FunctionDef]:
    """The functions ``register()`` attaches (``app.command("x")(function)``), a command
    built by a factory (``enable_command = _discovery_command(...)``) as that factory."""
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    built = {
        target.id: node.value.func.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: list[ast.FunctionDef] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Call)
            and isinstance(node.func.func, ast.Attribute)
            and node.func.func.attr == "command"
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            name = built.get(node.args[0].id, node.args[0].id)
            if name in functions:
                found.append(functions[name])
    return found


def over_one_import(path: Path) -> dict[str, dict[str, int]]:
    """For each command of ``path`` that imports a use-case package more than once in its
    body (nested functions included): how many times, by package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: dict[str, dict[str, int]] = {}
    for function in _registered(tree):
        counts: dict[str, int] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                parts = node.module.split(".")
                package = parts[1] if parts[0] == "nexo_pkg" and len(parts) > 1 else None
            elif isinstance(node, ast.Import):
                parts = node.names[0].name.split(".")
                package = parts[1] if parts[0] == "nexo_pkg" and len(parts) > 1 else None
            else:
                continue
            if package in USE_CASES:
                counts[package] = counts.get(package, 0) + 1
        over = {package: count for package, count in counts.items() if count > 1}
        if over:
            found[function.name] = over
    return found


def test_the_use_case_floors_are_read_from_the_contract() -> None:
    assert {"fleet", "install", "pack", "check"} <= USE_CASES
    assert not USE_CASES & {"cli", "core", "sources", "lint"}


def test_every_command_imports_a_use_case_package_once_at_most() -> None:
    modules = sorted(CLI.glob("*.py"))
    commands = [
        function for path in modules for function in _registered(ast.parse(path.read_text()))
    ]
    assert len(commands) >= 30  # every command of `nexo plugin` is looked at
    found = {path.name: hits for path in modules if (hits := over_one_import(path))}
    assert found == {}


def test_the_check_catches_narrow_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import typer\n"
        "from nexo_pkg.install import api as install_api\n"
        "def hold_command(plugin_id: str) -> None:\n"
        "    from nexo_pkg.install.hold import read_hold\n"
        "    from nexo_pkg.sources.api import upgrades_from\n"
        "    def run() -> None:\n"
        "        from nexo_pkg.install.receipts import installed_versions\n"
        "        import nexo_pkg.fleet.sync\n"
        "def info_command() -> None:\n"
        "    from nexo_pkg.pack import build\n"
        "    install_api.read_hold\n"
        "enable_command = factory()\n"
        "def factory() -> object:\n"
        "    def command() -> None:\n"
        "        from nexo_pkg.fleet.lock import lock\n"
        "        from nexo_pkg.fleet import api\n"
        "    return command\n"
        "def register(app: typer.Typer) -> None:\n"
        '    app.command("hold")(hold_command)\n'
        '    app.command("info")(info_command)\n'
        '    app.command("enable")(enable_command)\n',
        encoding="utf-8",
    )
    assert over_one_import(sample) == {"hold_command": {"install": 2}, "factory": {"fleet": 2}}


@pytest.mark.parametrize(
    "face",
    ["nexo_pkg.install.api", "nexo_pkg.fleet.api", "nexo_pkg.sources.api", "nexo_pkg.trust.api"],
)
def test_every_name_of_a_lazy_face_resolves(face: str) -> None:
    module = importlib.import_module(face)
    assert set(module._HOMES) == set(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name
    with pytest.raises(AttributeError, match="no_such_name"):
        getattr(module, "no_such_name")  # noqa: B009 - the face's __getattr__ is the subject


def test_importing_a_face_loads_nothing_behind_it() -> None:
    """A command module imports the faces at its top, so ``--help`` pays for neither; a name
    loads its own module and no other (``read_hold``: the hold, not the pipeline)."""
    code = (
        "import sys\n"
        "import nexo_pkg.cli.install, nexo_pkg.cli.operate, nexo_pkg.cli.fleet\n"
        "def ours():\n"
        "    return sorted(m for m in sys.modules if m.startswith(('nexo_pkg.install.',"
        " 'nexo_pkg.fleet.')))\n"
        "print(ours())\n"
        "from nexo_pkg.install import api\n"
        "api.read_hold\n"
        "print(ours())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    before, after = done.stdout.splitlines()
    assert before == "['nexo_pkg.fleet.api', 'nexo_pkg.install.api']"
    assert "'nexo_pkg.install.hold'" in after
    assert "'nexo_pkg.install.pipeline'" not in after
