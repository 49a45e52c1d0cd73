"""The rule registry, --explain pages and docs/rules.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from nexo_pkg.core.diagnostics import Rule
from nexo_pkg.lint.explain import BEYOND_DAEMON_NOTE, explain_text, rules_markdown
from nexo_pkg.lint.registry import all_rules, find_rule, is_known_selector
from nexo_pkg.manifest.core_rules import CORE_RULES

ROOT = Path(__file__).resolve().parent.parent.parent
RULES = list(all_rules().values())


def test_core_codes_are_in_their_range_and_unique() -> None:
    codes = [rule.code for rule in CORE_RULES]
    assert len(codes) == len(set(codes))
    for code in codes:
        assert re.fullmatch(r"NX0\d\d", code), code


def test_no_two_semantic_rules_share_a_code() -> None:
    """The catalog is a tuple turned into a dict: a repeated code would silently hide a rule."""
    from nexo_pkg.manifest.rules_catalog import _RULES

    codes = [rule.code for rule in _RULES]
    assert sorted(code for code in set(codes) if codes.count(code) > 1) == []


def test_registry_merges_semantic_rules_without_clashes() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))
    assert any(rule.code >= "NX100" for rule in RULES)
    assert list(all_rules()) == sorted(all_rules())


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.code)
def test_every_rule_is_documented(rule: Rule) -> None:
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
    for part in (rule.summary, rule.what, rule.why, rule.example, rule.fix):
        assert part.strip()
    page = explain_text(rule)
    assert page.startswith(f"{rule.code} {rule.name} ({rule.severity})")
    for heading in ("What it checks", "Why", "Example", "Fix"):
        assert f"\n{heading}\n" in page
    assert (BEYOND_DAEMON_NOTE in page) == rule.beyond_daemon


def test_find_rule_by_code_or_name() -> None:
    assert find_rule("nx011") is find_rule("unknown-key") is find_rule("NX011")
    assert find_rule("NX999") is None
    assert find_rule("no-such-rule") is None


@pytest.mark.parametrize(
    ("selector", "known"),
    [
        ("NX011", True),
        ("NX1", True),
        ("nx0", True),
        ("unknown-key", True),
        ("sandbox-", True),
        ("NX9", False),
        ("bogus", False),
        ("", False),
    ],
)
def test_selectors(selector: str, known: bool) -> None:
    assert is_known_selector(selector) is known


def test_rules_doc_is_up_to_date() -> None:
    expected = rules_markdown(RULES)
    actual = (ROOT / "docs" / "rules.md").read_text("utf-8")
    assert actual == expected, "run: python scripts/gen_rules_doc.py"


def test_rules_doc_anchors_match_rule_urls() -> None:
    doc = (ROOT / "docs" / "rules.md").read_text("utf-8")
    for rule in RULES:
        anchor = rule.url.rsplit("#", 1)[1]
        assert f"\n## {rule.code} {rule.name}\n" in doc
        assert anchor == f"{rule.code.lower()}-{rule.name}"


def test_generator_script_writes_the_doc(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_rules_doc.py")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert completed.returncode == 0, completed.stderr


def test_trust_policy_rules_are_explained_too() -> None:
    rule = find_rule("policy-unknown-key")
    assert rule is not None
    assert find_rule(rule.code) is rule
    assert rule.code not in all_rules()  # not a manifest rule: docs/rules.md leaves it out


SECURITY_ERRORS = {"NX004", "NX107", "NX146", "NX147"}


def test_severity_means_what_the_daemon_does() -> None:
    """A warning always reports something the daemon accepts; an error beyond the daemon is one
    of the few security checks."""
    for rule in all_rules().values():
        if rule.severity == "warning":
            assert rule.beyond_daemon, rule.code
        elif rule.beyond_daemon:
            assert rule.code in SECURITY_ERRORS, rule.code


def test_the_rules_doc_lists_every_place_stricter_than_the_daemon() -> None:
    from nexo_pkg.lint.explain import stricter_than_daemon

    text = rules_markdown(all_rules().values())
    section = text.split("## Where nexo-pkg is stricter than the daemon", 1)[1].split("\n## ")[0]
    for rule in stricter_than_daemon(all_rules().values()):
        assert f"[{rule.code}]" in section
    assert "plugin.toml" in section


def test_empty_command_explanation_matches_the_daemon() -> None:
    # The daemon's manifest validation lets a blank command through, but its subprocess spawn
    # code refuses one ("manifest entrypoint.command is empty"): the explanation must say so.
    rule = all_rules()["NX107"]
    assert rule.severity == "error"
    assert rule.beyond_daemon
    text = explain_text(rule)
    assert "spawn code refuses it" in text
    assert "manifest entrypoint.command is empty" in text
    assert "does not refuse" not in text


def test_every_explained_rule_links_to_its_own_section() -> None:
    """`rule --all` and `--explain` give each rule a documentation link: a trust-policy rule's
    section is in docs/trust.md (rules.md leaves them out), a manifest rule's in rules.md."""
    import json

    from support.cli import nexo

    shown = nexo("plugin", "rule", "--all", "--json", in_process=True)
    assert shown.code == 0, shown.stderr
    rules = json.loads(shown.stdout)["rules"]
    assert any(rule["code"].startswith("NXT") for rule in rules)
    prefix = "https://github.com/nexo-pkg/nexo-pkg/blob/main/"
    for rule in rules:
        assert rule["url"].startswith(prefix), rule["url"]
        page, anchor = rule["url"].removeprefix(prefix).split("#")
        headings = (ROOT / page).read_text("utf-8")
        assert f"\n### {rule['code']} {rule['name']}\n" in headings or (
            f"\n## {rule['code']} {rule['name']}\n" in headings
        ), rule["url"]
        assert anchor == f"{rule['code'].lower()}-{rule['name']}"
    explained = nexo("plugin", "rule", "NXT004", in_process=True)
    assert "docs/trust.md#nxt004-policy-invalid-value" in explained.stdout
