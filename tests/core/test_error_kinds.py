"""Every error kind the code raises is an :class:`ErrorKind`, and every kind is described.

The raise sites are found by reading the source (an AST walk over every module of
``nexo_pkg``): calls of :class:`NexoError` or one of its subclasses with a ``kind=`` string,
class-level ``kind = "..."`` of those subclasses, helpers that pass a ``kind`` parameter on to
such an error or to a ``--json`` failure document (their defaults and the strings they are
called with), and failure documents built in place (``{"ok": ..., "kind": "..."}``). A kind
added anywhere without an ``ErrorKind`` member fails here.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.cli import nexo

from nexo_pkg.core.errors import ConfigError, NexoError, UsageError
from nexo_pkg.core.kinds import EXIT_FAILURE, EXIT_USAGE, ErrorKind, exit_code_of

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "nexo_pkg"

# SPEC.md section 5: the `kind` of a failed `install --json` is one of these.
SPEC_KINDS = (
    "source_invalid",
    "release_not_found",
    "asset_not_found",
    "network",
    "rate_limited",
    "checksum_missing",
    "checksum_mismatch",
    "signature_missing",
    "signature_invalid",
    "signer_untrusted",
    "policy_invalid",
    "archive_invalid",
    "archive_unsafe",
    "manifest_invalid",
    "manifest_mismatch",
    "already_installed",
    "downgrade_refused",
    "io",
    "cancelled",
)

KNOWN = frozenset(kind.value for kind in ErrorKind)
_EXIT_NAMES = {"EXIT_OK": 0, "EXIT_FAILURE": EXIT_FAILURE, "EXIT_USAGE": EXIT_USAGE}


@dataclass(frozen=True)
class KindUse:
    """One place in the source that gives an error a kind."""

    kind: str
    where: str  # path:line
    how: str  # "call", "class" or "default"
    error_class: str  # the NexoError (sub)class, or the helper for a default
    explicit_exit_code: bool  # the call names its exit code


@dataclass
class _ClassInfo:
    bases: list[str]
    kind: str | None
    exit_code: int | None


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _string(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _exit_code(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if node is not None and (name := _name(node)) in _EXIT_NAMES:
        return _EXIT_NAMES[name]
    return None


def _class_attributes(node: ast.ClassDef) -> dict[str, ast.expr]:
    attributes: dict[str, ast.expr] = {}
    for statement in node.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target: ast.expr = statement.targets[0]
            value: ast.expr | None = statement.value
        elif isinstance(statement, ast.AnnAssign):
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name) and value is not None:
            attributes[target.id] = value
    return attributes


def _modules(root: Path) -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(root.rglob("*.py")):
        if "templates" in path.relative_to(root).parts:
            continue  # scaffold templates: files for a new project, not nexo-pkg code
        yield str(path.relative_to(root.parent)), ast.parse(path.read_bytes(), str(path))


def error_classes(modules: list[tuple[str, ast.Module]]) -> dict[str, _ClassInfo]:
    """NexoError and its subclasses by class name, each with its own (or inherited) kind and
    exit code."""
    classes: dict[str, _ClassInfo] = {}
    for _, tree in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                attributes = _class_attributes(node)
                classes[node.name] = _ClassInfo(
                    bases=[name for base in node.bases if (name := _name(base)) is not None],
                    kind=_string(attributes.get("kind")),
                    exit_code=_exit_code(attributes.get("exit_code")),
                )
    family = {"NexoError"}
    grown = True
    while grown:
        grown = False
        for name, info in classes.items():
            if name not in family and family.intersection(info.bases):
                family.add(name)
                grown = True
    resolved: dict[str, _ClassInfo] = {}

    def resolve(name: str) -> _ClassInfo:
        if name not in resolved:
            info = classes[name]
            parent = next((resolve(base) for base in info.bases if base in family), None)
            resolved[name] = _ClassInfo(
                bases=info.bases,
                kind=info.kind if info.kind is not None or parent is None else parent.kind,
                exit_code=(
                    info.exit_code
                    if info.exit_code is not None or parent is None
                    else parent.exit_code
                ),
            )
        return resolved[name]

    return {name: resolve(name) for name in family}


def _failure_kind(node: ast.AST) -> ast.expr | None:
    """The ``kind`` of a ``--json`` failure document built in place: a ``{"ok": ..., "kind":
    K}`` literal or a call with ``ok=`` and ``kind=`` (``document.update(ok=False, kind=K)``)."""
    if isinstance(node, ast.Dict):
        entries = {
            key.value: value
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str)
        }
        if "ok" in entries and "kind" in entries:
            return entries["kind"]
    if isinstance(node, ast.Call):
        keywords = {keyword.arg: keyword.value for keyword in node.keywords}
        if "ok" in keywords and "kind" in keywords:
            return keywords["kind"]
    return None


def _is_kind_parameter(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Name) and node.id == "kind"


def _passes_kind_on(function: ast.FunctionDef | ast.AsyncFunctionDef, family: set[str]) -> bool:
    """The function passes its ``kind`` parameter on to an error or a failure document it
    builds (so its ``kind`` is an error kind, not, say, a ``--kind`` option)."""
    for node in ast.walk(function):
        if (
            isinstance(node, ast.Call)
            and _name(node.func) in family
            and any(k.arg == "kind" and _is_kind_parameter(k.value) for k in node.keywords)
        ):
            return True
        if _is_kind_parameter(_failure_kind(node)):
            return True
    return False


@dataclass(frozen=True)
class _Helper:
    """A function that passes its ``kind`` parameter on; ``position`` is that parameter's index
    among the positional arguments of a call (``None``: keyword only)."""

    position: int | None
    defaults: tuple[tuple[str, int], ...]  # (kind, line) of a default value of ``kind``


def _helper(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Helper:
    arguments = function.args
    positional = [argument.arg for argument in arguments.posonlyargs + arguments.args]
    if positional[:1] in (["self"], ["cls"]):
        positional = positional[1:]
    defaults = [
        default
        for argument, default in [
            *zip(
                (arguments.posonlyargs + arguments.args)[
                    len(arguments.posonlyargs + arguments.args) - len(arguments.defaults) :
                ],
                arguments.defaults,
                strict=True,
            ),
            *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
        ]
        if argument.arg == "kind" and default is not None
    ]
    return _Helper(
        positional.index("kind") if "kind" in positional else None,
        tuple(
            (kind, default.lineno) for default in defaults if (kind := _string(default)) is not None
        ),
    )


def _helpers(
    modules: list[tuple[str, ast.Module]], family: set[str]
) -> dict[str, dict[str, _Helper]]:
    """By module, the functions it may call that pass a ``kind`` parameter on: its own, and
    the public ones of every module."""
    own: dict[str, dict[str, _Helper]] = {}
    public: dict[str, _Helper] = {}
    for where, tree in modules:
        found = own.setdefault(where, {})
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and any(a.arg == "kind" for a in [*node.args.args, *node.args.kwonlyargs])
                and _passes_kind_on(node, family)
            ):
                found[node.name] = _helper(node)
                if not node.name.startswith("_"):
                    public[node.name] = found[node.name]
    return {where: {**public, **found} for where, found in own.items()}


def kind_uses(root: Path = PACKAGE) -> list[KindUse]:
    """Every kind the source under ``root`` gives an error or a failure document, with where
    and how."""
    modules = list(_modules(root))
    family = set(error_classes(modules))
    helpers = _helpers(modules, family)
    uses: list[KindUse] = []
    for where, tree in modules:
        for node in ast.walk(tree):
            line = f"{where}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Call) and (callee := _name(node.func)) in family:
                keywords = {keyword.arg: keyword.value for keyword in node.keywords}
                kind = _string(keywords.get("kind"))
                if kind is not None:
                    uses.append(KindUse(kind, line, "call", callee, "exit_code" in keywords))
            elif isinstance(node, ast.Call) and (callee := _name(node.func)) in helpers[where]:
                helper = helpers[where][callee]
                keywords = {keyword.arg: keyword.value for keyword in node.keywords}
                argument = keywords.get("kind")
                position = helper.position
                if argument is None and position is not None and position < len(node.args):
                    argument = node.args[position]
                kind = _string(argument)
                if kind is not None:
                    uses.append(KindUse(kind, line, "helper", callee, True))
            elif isinstance(node, ast.ClassDef) and node.name in family:
                kind = _string(_class_attributes(node).get("kind"))
                if kind is not None:
                    uses.append(KindUse(kind, line, "class", node.name, True))
            elif (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name in helpers[where]
                and _passes_kind_on(node, family)
            ):
                uses.extend(
                    KindUse(kind, f"{where}:{default_line}", "default", node.name, True)
                    for kind, default_line in _helper(node).defaults
                )
            if (kind := _string(_failure_kind(node))) is not None:
                uses.append(KindUse(kind, line, "document", "--json", True))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                uses.extend(
                    KindUse(kind, f"{where}:{at}", "document", "--json", True)
                    for kind, at in _kinds_set_with_an_error(node)
                )
    return uses


def _kinds_set_with_an_error(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
) -> list[tuple[str, int]]:
    """The kinds a failure document is given item by item (``document["kind"] = K`` where the
    same function sets ``document["error"]``): a report's ``kind`` without an error is none."""

    def assigned(node: ast.AST, key: str) -> tuple[str, ast.expr] | None:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and isinstance(target.slice, ast.Constant)
                and target.slice.value == key
            ):
                return target.value.id, node.value
        return None

    nodes = list(ast.walk(function))
    with_errors = {found[0] for node in nodes if (found := assigned(node, "error")) is not None}
    kinds: list[tuple[str, int]] = []
    for node in nodes:
        found = assigned(node, "kind")
        if found is not None and found[0] in with_errors:
            kind = _string(found[1])
            if kind is not None:
                kinds.append((kind, getattr(node, "lineno", 0)))
    return kinds


@pytest.fixture(scope="module")
def uses() -> list[KindUse]:
    return kind_uses()


def test_every_raised_kind_is_an_error_kind(uses: list[KindUse]) -> None:
    unknown = [f"{use.where}: {use.kind!r} ({use.how})" for use in uses if use.kind not in KNOWN]
    assert not unknown, "add these kinds to nexo_pkg/core/kinds.py ErrorKind:\n" + "\n".join(
        unknown
    )


def test_the_scan_sees_calls_classes_helpers_and_documents(uses: list[KindUse]) -> None:
    seen = {(use.kind, use.how, use.error_class) for use in uses}
    assert ("source_invalid", "call", "NexoError") in seen
    assert ("policy_invalid", "call", "ConfigError") in seen
    assert ("usage", "class", "UsageError") in seen
    assert ("signer_untrusted", "class", "SignerUntrustedError") in seen  # a grandchild
    assert ("lock_invalid", "default", "_invalid") in seen
    assert ("registry_invalid", "helper", "parse_json") in seen  # a public helper, elsewhere
    assert ("lock_invalid", "helper", "_load_toml") in seen  # a private one, in its module
    assert ("cancelled", "call", "NexoError") in seen  # an aborted prompt, in cli/app.py
    assert ("interrupted", "document", "--json") in seen
    assert ("check_failed", "document", "--json") in seen
    assert len(uses) > 150


def test_the_scan_reports_an_unknown_kind(tmp_path: Path) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "errors.py").write_text(
        "class NexoError(Exception):\n    kind = 'error'\n"
        "class FetchError(NexoError):\n    kind = 'fetch_broke'\n",
        encoding="utf-8",
    )
    (package / "use.py").write_text(
        "from package.errors import FetchError, NexoError\n"
        "def go(kind='no_such_default'):\n"
        "    raise NexoError('x', kind=kind)\n"
        "def new(kind='plugin'):\n"
        "    raise NexoError('x', kind='no_such_kind')\n"
        "def other():\n"
        "    raise FetchError('y', kind='io')\n"
        "    raise ValueError('z', kind='not_an_error')\n",
        encoding="utf-8",
    )
    (package / "cli.py").write_text(
        "def _emit(kind, message):\n"
        "    print({'ok': False, 'kind': kind, 'error': message})\n"
        "def count(name, kind):\n"
        "    return name, kind\n"
        "def run(document):\n"
        "    _emit('emitted_kind', 'm')\n"
        "    document.update(ok=False, kind='updated_kind')\n"
        "    count('blob', 'a_counter')\n"
        "    count('blob', kind='another_counter')\n"
        "    return {'ok': False, 'kind': 'literal_kind'}\n",
        encoding="utf-8",
    )
    found = {(use.kind, use.how) for use in kind_uses(package)}
    assert found == {
        ("error", "class"),
        ("fetch_broke", "class"),
        ("no_such_default", "default"),
        ("no_such_kind", "call"),
        ("io", "call"),
        ("emitted_kind", "helper"),
        ("updated_kind", "document"),
        ("literal_kind", "document"),
    }
    assert {kind for kind, _ in found if kind not in KNOWN} == {
        "fetch_broke",
        "no_such_default",
        "no_such_kind",
        "emitted_kind",
        "updated_kind",
        "literal_kind",
    }


def test_the_kinds_of_the_spec_are_kept() -> None:
    assert set(SPEC_KINDS) <= KNOWN


@pytest.mark.parametrize("kind", list(ErrorKind), ids=lambda kind: kind.value)
def test_every_kind_has_a_description_and_an_exit_code(kind: ErrorKind) -> None:
    assert kind.value.isidentifier()
    assert kind.value == kind.value.lower()
    assert kind.description.strip() == kind.description
    assert "\n" not in kind.description
    assert kind.description.endswith(".")
    if kind is ErrorKind.INTERRUPTED:
        # Not a NexoError: a signal ends the run with 128 + its number (SIGINT: 130).
        assert kind.exit_code == 130
    else:
        assert kind.exit_code in {EXIT_FAILURE, EXIT_USAGE}


def test_a_kind_without_an_exit_code_keeps_the_exit_code_it_had(uses: list[KindUse]) -> None:
    """Errors take their kind's exit code when the raise site names none; at every such site
    that is the exit code the error class gave before the enum existed."""
    classes = error_classes(list(_modules(PACKAGE)))
    changed = [
        f"{use.where}: {use.error_class}(kind={use.kind!r}) exits "
        f"{classes[use.error_class].exit_code}, ErrorKind says {exit_code_of(use.kind)}"
        for use in uses
        if use.how == "call"
        and not use.explicit_exit_code
        and exit_code_of(use.kind) not in {None, classes[use.error_class].exit_code}
    ]
    assert not changed, "name the exit code at these raise sites:\n" + "\n".join(changed)


def test_an_error_kind_is_stored_as_its_plain_string() -> None:
    error = NexoError("the policy is bad", kind=ErrorKind.POLICY_INVALID)
    assert type(error.kind) is str
    assert error.kind == "policy_invalid"
    assert error.exit_code == EXIT_USAGE  # the kind's, where the caller names none
    assert json.loads(json.dumps(error.to_json())) == {
        "ok": False,
        "kind": "policy_invalid",
        "error": "the policy is bad",
    }


def test_a_string_kind_and_an_explicit_exit_code_work_as_before() -> None:
    assert NexoError("x", kind="network").exit_code == EXIT_FAILURE
    assert NexoError("x", kind="source_invalid", exit_code=EXIT_USAGE).exit_code == EXIT_USAGE
    assert NexoError("x", kind=ErrorKind.IO, exit_code=EXIT_USAGE).exit_code == EXIT_USAGE
    # A kind the enum does not list keeps the class's exit code.
    assert NexoError("x", kind="elsewhere_broken").exit_code == EXIT_FAILURE
    assert ConfigError("x", kind="elsewhere_broken").exit_code == EXIT_USAGE
    assert UsageError("x").kind == "usage"
    assert UsageError("x").exit_code == ErrorKind.USAGE.exit_code
    assert ConfigError("x").exit_code == ErrorKind.CONFIG.exit_code


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["plugin", "trust", "list", "--trusted-keys", "policy.toml"], ErrorKind.POLICY_INVALID),
        (["plugin", "verify", "absent", "--dest", "plugins"], ErrorKind.NOT_INSTALLED),
    ],
    ids=["policy_invalid", "not_installed"],
)
def test_a_json_failure_names_a_listed_kind_and_exits_with_its_code(
    tmp_path: Path, command: list[str], expected: ErrorKind
) -> None:
    """Through the real command: the ``--json`` kind is an ``ErrorKind`` and the exit code is
    that kind's (2 for a configuration error, 1 for a "no")."""
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "bogus"\n', encoding="utf-8")
    completed = nexo(*command, "--json", cwd=tmp_path, in_process=True)
    document = json.loads(completed.stdout)
    assert document["ok"] is False
    assert document["kind"] == expected.value
    assert completed.code == expected.exit_code
    assert completed.stderr.startswith("error: ")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["policy.toml"]  # nothing written
    assert policy.read_text(encoding="utf-8") == 'default = "bogus"\n'
