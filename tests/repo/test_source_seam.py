"""Callers outside ``nexo_pkg/sources`` ask the sources seam what to do with a source, never
what kind it is.

``sources/route.py`` answers every question that depends on the kind of a source (the words
of an ``install`` command that reaches an origin again, whether a source reads the registry
credentials, whether ``mirror`` copies a version as it is, whether a service said its rate
limit is spent). So no module outside ``nexo_pkg/sources`` calls ``is_registry_source``,
compares a text with the ``oci://`` scheme, or reads an origin's ``type`` to branch on it
(``origin["type"]``, ``origin.get("type")``, or ``origin.type`` in a comparison, a
condition or a lookup), nor a receipt's ``source`` (the kind it recorded) the same ways.
Nor does it hand the kind alone (``origin.type``, ``receipt.source``) to a function to ask
what the kind does (the retired ``follows``/``tag_pins`` predicates): the seam takes the
whole origin (``upgrades_from(origin)``, ``pins_upgrade(origin)``, or a receipt's
``upgradable``/``binds_upgrade``). Recording the type (a keyword of a record, a dict's
value) is not telling kinds apart. (``test_source_route.py`` forbids the kinds' class
names, modules and ``type`` strings.)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "nexo_pkg"
SCHEME = "oci://"
RETIRED = {"is_registry_source", "follows", "tag_pins"}
TEXT_TESTS = {"startswith", "removeprefix", "find", "index", "partition", "split", "count"}
ORIGIN = re.compile(r"(^|_)origin$")
RECEIPT = re.compile(r"(^|_)receipts?$")


def _is_origin(node: ast.AST) -> bool:
    """Whether ``node`` names an origin (``origin``, ``candidate.origin``, ``old_origin``)."""
    if isinstance(node, ast.Name):
        return bool(ORIGIN.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(ORIGIN.search(node.attr))
    return False


def _is_receipt(node: ast.AST) -> bool:
    """Whether ``node`` names a receipt (``receipt``, ``item.receipt``, ``receipts[0]``)."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return bool(RECEIPT.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(RECEIPT.search(node.attr))
    return False


def _has_scheme(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return node.value == SCHEME
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_has_scheme(element) for element in node.elts)
    return False


def _branches_on(parent: ast.AST, node: ast.AST) -> bool:
    """Whether ``parent`` uses the value ``node`` to decide: compares it, tests it, matches
    it, or looks something up by it."""
    if isinstance(parent, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
        return True
    if isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert)):
        return parent.test is node
    if isinstance(parent, ast.Match):
        return parent.subject is node
    if isinstance(parent, ast.Subscript):
        return parent.slice is node
    if isinstance(parent, ast.Dict):
        return any(key is node for key in parent.keys)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute):
        return parent.func.attr in {"get", "pop", "setdefault"} and node in parent.args
    return False


def kind_tests(path: Path) -> list[str]:
    """Where ``path`` tells a source's kind itself rather than asking the seam."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name) and node.id in RETIRED:
            found.append(f"l.{line}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in RETIRED:
            found.append(f"l.{line}: {node.attr}")
        elif isinstance(node, ast.ImportFrom) and (
            retired := [a.name for a in node.names if a.name in RETIRED]
        ):
            found.extend(f"l.{line}: imports {name}" for name in retired)
        elif isinstance(node, ast.Compare) and any(
            _has_scheme(operand) for operand in (node.left, *node.comparators)
        ):
            found.append(f"l.{line}: compares with {SCHEME!r}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in TEXT_TESTS
            and any(_has_scheme(argument) for argument in node.args)
        ):
            found.append(f"l.{line}: .{node.func.attr}({SCHEME!r})")
        elif (
            isinstance(node, ast.Subscript)
            and _is_origin(node.value)
            and isinstance(node.slice, ast.Constant)
            and node.slice.value == "type"
        ) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _is_origin(node.func.value)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "type"
        ):
            found.append(f"l.{line}: reads an origin's type")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "type"
            and _is_origin(node.value)
            and node in parents
            and _branches_on(parents[node], node)
        ):
            found.append(f"l.{line}: branches on an origin's type")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "source"
            and _is_receipt(node.value)
            and node in parents
            and _branches_on(parents[node], node)
        ):
            found.append(f"l.{line}: branches on a receipt's source")
        elif isinstance(node, ast.Call) and not (
            isinstance(node.func, ast.Attribute) and node.func.attr in {"get", "pop", "setdefault"}
        ):
            for argument in node.args:
                if isinstance(argument, ast.Attribute) and (
                    (argument.attr == "type" and _is_origin(argument.value))
                    or (argument.attr == "source" and _is_receipt(argument.value))
                ):
                    found.append(f"l.{line}: asks about a kind alone")
    return found


def test_no_kind_is_told_apart_outside_the_sources_seam() -> None:
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "sources" and (hits := kind_tests(path))
    }
    assert found == {}


def test_the_check_catches_each_way_of_telling_a_kind(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from nexo_pkg.sources.api import is_registry_source\n"
        "def f(text: str, origin: object, candidate: object, known: dict) -> object:\n"
        "    if is_registry_source(text) or text.startswith('oci://'):\n"
        "        return 1\n"
        "    if text[:6] == 'oci://' or text.startswith(('oci://', 'x')):\n"
        "        return 2\n"
        "    stopped = known.get(str(origin.get('type')))\n"
        "    if candidate.origin.type != 'x' or origin['type']:\n"
        "        return stopped\n"
        "    if item.receipt.source == 'x' or known.get(receipt.source):\n"
        "        return known.setdefault(receipts[0].source, 1)\n"
        "    return known[candidate.origin.type]\n",
        encoding="utf-8",
    )
    assert sorted(kind_tests(sample), key=lambda hit: (int(hit[2:].split(":")[0]), hit)) == [
        "l.1: imports is_registry_source",
        "l.3: .startswith('oci://')",
        "l.3: is_registry_source",
        "l.5: .startswith('oci://')",
        "l.5: compares with 'oci://'",
        "l.7: reads an origin's type",
        "l.8: branches on an origin's type",
        "l.8: reads an origin's type",
        "l.10: branches on a receipt's source",
        "l.10: branches on a receipt's source",
        "l.11: branches on a receipt's source",
        "l.12: branches on an origin's type",
    ]


def test_the_check_catches_a_question_asked_of_a_kind_alone(tmp_path: Path) -> None:
    """``follows(receipt.source)`` was a kind test in a question's clothes: the command
    chose what to do from the kind's name. The seam answers for a whole origin."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from nexo_pkg.sources.api import follows, tag_pins\n"
        "def f(origin: object, item: object, receipts: list) -> object:\n"
        "    keep = follows(origin.type) or tag_pins(item.receipt.source)\n"
        "    return keep, upgradable(receipts[0].source), ask(candidate.origin.type)\n",
        encoding="utf-8",
    )
    assert sorted(kind_tests(sample)) == [
        "l.1: imports follows",
        "l.1: imports tag_pins",
        "l.3: asks about a kind alone",
        "l.3: asks about a kind alone",
        "l.3: follows",
        "l.3: tag_pins",
        "l.4: asks about a kind alone",
        "l.4: asks about a kind alone",
    ]


def test_passing_an_origin_on_is_not_telling_its_kind(tmp_path: Path) -> None:
    """Recording an origin's type, handing it to the seam, or writing the scheme in a
    message is not a kind test."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from nexo_pkg.sources.api import reinstall_words, upgrades_from\n"
        "def f(origin: object, text: str) -> object:\n"
        "    keep = upgrades_from(origin.source) and receipt.upgradable\n"
        "    record = {'source': origin.type, 'kind': receipt.source}\n"
        "    made = Receipt(source=origin.type)\n"
        "    help = 'an oci:// reference, or owner/repo@tag'\n"
        "    return keep, record, made, help, reinstall_words(origin, plain_http=False, "
        "github_api_url=None)\n",
        encoding="utf-8",
    )
    assert kind_tests(sample) == []
