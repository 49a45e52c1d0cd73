"""Every lint rule by code: the file/structure rules here and the semantic rules.

``--explain``, ``--select``/``--ignore`` validation, the SARIF rule table and ``docs/rules.md``
all read this registry, so a rule exists in one place only.
"""

from __future__ import annotations

from functools import cache

from nexo_pkg.core.diagnostics import Rule
from nexo_pkg.manifest.core_rules import CORE_RULES
from nexo_pkg.manifest.microapp_catalog import MICROAPP_RULES
from nexo_pkg.manifest.rules_catalog import SEMANTIC_RULES

__all__ = ["all_rules", "every_rule", "find_rule", "is_known_selector", "rules_for_codes"]


@cache
def all_rules() -> dict[str, Rule]:
    """Every rule, keyed by code, in code order."""
    rules = [*CORE_RULES, *SEMANTIC_RULES.values(), *MICROAPP_RULES.values()]
    return {rule.code: rule for rule in sorted(rules, key=lambda rule: rule.code)}


@cache
def _policy_rules() -> dict[str, Rule]:
    """The trust-policy rules (``trusted_keys.toml``), loaded only when asked for."""
    from nexo_pkg.trust.policy import POLICY_RULES  # noqa: PLC0415 - a manifest lint needs none

    return dict(POLICY_RULES)


def _lookup(wanted: str, rules: dict[str, Rule]) -> Rule | None:
    by_name = (rule for rule in rules.values() if rule.name == wanted.lower())
    return rules.get(wanted.upper()) or next(by_name, None)


def every_rule() -> dict[str, Rule]:
    """Every rule, the trust-policy ones included, keyed by code, in code order."""
    return dict(sorted({**all_rules(), **_policy_rules()}.items()))


def find_rule(code_or_name: str) -> Rule | None:
    """The rule with this code (any case) or kebab-case name, or ``None``.

    Manifest rules first; the trust-policy rules are also found (``--explain NXT002``).
    """
    wanted = code_or_name.strip()
    return _lookup(wanted, all_rules()) or _lookup(wanted, _policy_rules())


def rules_for_codes(codes: set[str]) -> dict[str, Rule]:
    """The manifest rules, plus the trust-policy rules when ``codes`` has any of theirs."""
    rules = all_rules()
    return rules if codes.issubset(rules) else {**rules, **_policy_rules()}


def is_known_selector(selector: str) -> bool:
    """Whether a ``--select``/``--ignore`` entry names at least one rule (code/name prefix)."""
    upper, lower = selector.upper(), selector.lower()

    def names_one(rules: dict[str, Rule]) -> bool:
        return any(
            code.startswith(upper) or rule.name.startswith(lower) for code, rule in rules.items()
        )

    return bool(selector) and (names_one(all_rules()) or names_one(_policy_rules()))
