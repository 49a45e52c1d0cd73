"""The pure-Python RE2 engine (where google-re2 has no wheel: musllinux) gives google-re2's
verdicts: the same match for every subject, the same refusal (RE2's error kind) for every
pattern RE2 refuses.

The patterns: every ``identity_regexp`` / ``source_ref`` of the policies in tests/ and the
shared fixtures (TOML files, TOML snippets, keyword arguments and ``--identity-regexp``
arguments in the test sources, the regex-like strings of the trust tests), and a generated
set of tricky ones. The subjects: the SAN URIs and e-mail identities those tests use, edited
(case, suffixes, newlines, non-ASCII) and random short strings. google-re2 is the reference
(``re2``, as the engine runs it: ``log_errors`` off, default options).
"""

from __future__ import annotations

import ast
import itertools
import random
import re
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from nexo_pkg.core.errors import NexoError
from nexo_pkg.trust import identity_pattern, re2_tables
from nexo_pkg.trust.identity_pattern import full_match
from nexo_pkg.trust.policy import lint_policy_source, parse_policy
from nexo_pkg.trust.re2_dialect import (
    MAX_PROGRAM_SIZE,
    UNSUPPORTED,
    Re2SyntaxError,
    compile_re2,
)

from .helpers import ACME_IDENTITY, SHARED_FIXTURES, VECTOR_IDENTITY

try:
    import re2
except ImportError:  # musllinux: only the pure-Python engine's own tests run
    re2 = None

needs_re2 = pytest.mark.skipif(
    re2 is None, reason="the differential needs google-re2 (the nexo-pkg[re2] extra)"
)

TESTS = Path(__file__).resolve().parents[1]
_KEYS = ("identity_regexp", "source_ref")
_TOML_ASSIGNMENT = re.compile(
    r"""\b(?:identity_regexp|source_ref)\s*=\s*("(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
)
_REGEX_LIKE = re.compile(r"[\^$\\\[\](){}*+?|]")


def _toml_value(literal: str) -> str | None:
    try:
        value = tomllib.loads(f"v = {literal}")["v"]
    except tomllib.TOMLDecodeError:
        return None
    return value if isinstance(value, str) else None


def _policy_patterns(document: object) -> Iterator[str]:
    if isinstance(document, dict):
        for key, value in document.items():
            if key in _KEYS and isinstance(value, str):
                yield value
            else:
                yield from _policy_patterns(value)
    elif isinstance(document, list):
        for item in document:
            yield from _policy_patterns(item)


def _from_toml_files(root: Path) -> Iterator[str]:
    for path in sorted(root.rglob("*.toml")):
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            # A file that is not TOML (a refused fixture) still has its assignments read.
            for literal in _TOML_ASSIGNMENT.findall(path.read_text(errors="replace")):
                if (value := _toml_value(literal)) is not None:
                    yield value
            continue
        yield from _policy_patterns(document)


def _from_test_sources(root: Path) -> Iterator[str]:
    for path in sorted(root.rglob("*.py")):
        if path.name == Path(__file__).name:
            continue  # this file's own tables are compared below, divergences apart
        tree = ast.parse(path.read_text(encoding="utf-8"))
        trust_test = path.parent.name == "trust"
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for literal in _TOML_ASSIGNMENT.findall(node.value):
                    if (value := _toml_value(literal)) is not None:
                        yield value
                text = node.value
                if trust_test and "\n" not in text and len(text) < 300 and _REGEX_LIKE.search(text):
                    yield text
            elif isinstance(node, ast.keyword) and node.arg in _KEYS:
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    yield node.value.value
            elif isinstance(node, ast.List | ast.Tuple):
                items = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
                for flag, argument in itertools.pairwise(items):
                    if flag in ("--identity-regexp", "--source-ref") and isinstance(argument, str):
                        yield argument


def collected_patterns() -> list[str]:
    found = {*_from_toml_files(TESTS), *_from_test_sources(TESTS)}
    if SHARED_FIXTURES.is_dir():
        found.update(_from_toml_files(SHARED_FIXTURES))
    return sorted(found)


def _identities() -> list[str]:
    """The identities the trust tests use: SAN URIs, e-mail identities, refs."""
    found = {ACME_IDENTITY, VECTOR_IDENTITY}
    for path in sorted((TESTS / "trust").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
                plain = " " not in text and "\n" not in text and len(text) < 200
                identity = text.startswith(("https://", "refs/")) or "@" in text
                if plain and identity:
                    found.add(text)
    return sorted(found)


def _edits(subject: str) -> list[str]:
    return [
        subject,
        subject + "\n",
        subject + "x",
        subject[:-1],
        subject.upper(),
        subject.replace("github.com", "github.com.evil"),
        subject.replace("/", "\u2215", 1),
        subject.replace("v", "V"),
        "x" + subject,
    ]


# Constructs one by one (RE2's parse.cc, case by case), then combinations.
# fmt: off
TRICKY = [
    "", "a", "a|", "|", "()", "(|a)", "a**", "a*?", "a*??", "a++", "a?+", "*", "+a", "(*)",
    "(|*)", "a|*", "^*", "$+", "\\b*", "a{2}{3}", "a{2}*", "a*{2}", "a{,3}", "a{1,2", "a{01}",
    "a{1000}", "a{1001}", "a{2,1}", "a{1,}", "a{0}", "a{0,0}", "{", "{1}", "x{1}?",
    "(a{10}){100}", "(a{100}){11}", "(?:a{2}){500}", "(?:a{2}){501}", "((a{2}){2}){250}",
    "((a{2}){2}){251}", "(a*){1000}", "(a{2,}){501}", "(a{0}){1000}", "(a{1000})*", "(", ")",
    "a)", "(a", "((a)", "(a))", "[", "[a", "[]", "[]a]", "[^]a]", "[^]", "[a-]", "[-a]",
    "[a-z-0]", "[z-a]", "[a-\\d]", "[\\d-z]", "[\\w-]", "[a\\]b]", "[\\b]", "[\\Q]",
    "[\\n-\\r]", "[\\x00-\\x{10FFFF}]", "[[:alpha:]]", "[[:^alpha:]]", "[[:foo:]]",
    "[[:alpha:]", "[[:alpha]]", "[[::]]", "[:alpha:]", "[[:word:][:digit:]]", "[[:space:]]",
    "[[:blank:]]", "[[:punct:]]", "[[:xdigit:]]", "[[:cntrl:]]", "[[:graph:]]", "[[:print:]]",
    "[[:ascii:]]", "[[:upper:]]", "[[:lower:]]", "[a&&b]", "[a--b]", "[a~~b]", "\\d", "\\D",
    "\\s", "\\S", "\\w", "\\W", "[\\D]", "[^\\d]", "[^\\D]", "\\b", "\\B", "\\A", "\\z", "\\Z",
    "\\G", "\\pL", "\\PL", "\\p{L}", "\\p{^L}", "\\P{^L}", "\\p{Lu}", "\\p{Ll}", "\\pN",
    "\\p{Nd}", "\\pZ", "\\pC", "\\p{Cc}", "\\p{Cn}", "\\p{LC}", "\\p{L&}", "\\p{Any}",
    "\\p{any}", "\\p{Foo}", "\\p", "\\p{", "\\p{L", "\\pX", "[\\pL]", "[\\p{Lu}\\d]", "[^\\pL]",
    "[\\P{L}]", "\\Qa.b\\E", "\\Qa.b", "\\Q\\E", "\\Q\\\\E", "\\Qa\\E*", "\\Qab\\E{2}", "\\E",
    "\\0", "\\01", "\\012", "\\0123", "\\1", "\\12", "\\8", "\\101", "\\x41", "\\x4", "\\x",
    "\\xZZ", "\\x{41}", "\\x{}", "\\x{110000}", "\\x{10FFFF}", "\\x{41", "\\n", "\\r", "\\t",
    "\\a", "\\f", "\\v", "\\e", "\\cA", "\\N{X}", "\\k<n>", "\\g1", "\\_", "\\-", "\\.", "\\/",
    "\\é", "\\", "a\\", "(?i)", "(?i)a", "(?i:a)b", "(?i)k", "(?i)s", "(?i)ß", "(?i)\u03c3",
    "(?i)[k]", "(?i)[^k]", "(?i)\\W", "(?i)[[:upper:]]", "(?i)\\p{Lu}", "(?i)\\P{Lu}",
    "(?i)[a-z]", "(?-i)a", "(?i-i)a", "(?i-)a", "(?-)a", "(?--i)a", "(?)a", "(?m)^a$", "(?m)a$",
    "(?s).", "(?U)a+", "(?x)a", "(?#c)", "(?=a)", "(?!a)", "(?<=a)", "(?<!a)", "(?>a)", "(?|a)",
    "(?P<n>a)", "(?<n>a)", "(?P<n>a)(?P<n>b)", "(?P<1>a)", "(?P<>a)", "(?P<n", "(?P<n-x>a)",
    "(?P<é>a)", "(?P=n)", "(?P>n)", "(?'n'a)", "(a)\\1", "(?", "(?i", "(?i:", "a(?i)*", "(?i)*",
    ".", ".*", "a.b", "(?s:.)", "^$", "^", "$", "a$\\n", "$a", "a^", "^^a$$", "\\Aa\\z", "a\\b",
    "\\ba\\b", "a\\Bb", "[^a]", "[^\\n]", "x*y*z*", "(a|ab)(c|bcd)(d*)", "(a+)+", "(a|a)*",
    "(a*)*b", "(?:a?){30}a{30}", "[a-c]+@[a-c]+\\.com", "\\.github/workflows/.*",
    "^https://github\\.com/[^/]+/[^/]+/\\.github/workflows/release\\.yml@refs/tags/v.*$",
    "^https://github.com/lordmacu/[[:alnum:]-]+/.*$", "^https://github.com/\\p{L}+/.*$",
    "^refs/tags/v[0-9]+\\.[0-9]+\\.[0-9]+$", "^[^@]+@example\\.com$", "\\p{Greek}",
    "\\p{^Latin}", "[\\p{Han}a]", "\\P{Cyrillic}", "(?i)\\p{Greek}", "\\p{Kawi}", "\\p{greek}",
]
# fmt: on


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    # fmt: off
    atoms = [
        "a", "b", "A", "K", ".", "\\d", "\\w", "\\s", "\\W", "[ab]", "[^a]", "[a-c]",
        "[[:alpha:]]", "\\pL", "\\PL", "\\p{Lu}", "\\.", "/", "@", "-", "\\b", "\\B", "^", "$",
        "(?i)", "(?m)", "(?s)", "\\x{212A}", "ß", "é", "\\Qa.\\E", "\\n", "[\\d-]",
    ]
    # fmt: on
    parts = []
    for _ in range(rng.randint(1, 4)):
        roll = rng.random()
        if roll < 0.6 or depth > 2:
            piece = rng.choice(atoms)
        elif roll < 0.8:
            piece = "(" + _random_pattern(rng, depth + 1) + ")"
        else:
            piece = "(?:" + _random_pattern(rng, depth + 1) + "|" + _random_pattern(rng, depth + 1)
            piece += ")"
        if rng.random() < 0.35:
            piece += rng.choice(["*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "{2,}", "??"])
        parts.append(piece)
    return "".join(parts)


def generated_patterns(count: int = 250) -> list[str]:
    rng = random.Random(20261129)  # noqa: S311 - reproducible, not secret
    return [_random_pattern(rng) for _ in range(count)]


def _random_subjects(rng: random.Random, count: int) -> list[str]:
    alphabet = "aAbBkK\u212a\u017fsSßẞé/.@-_\n \t\v9"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))) for _ in range(count)]


def _reference(pattern: str) -> object:
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options=options)
    except re2.error as exc:
        detail = exc.args[0]
        text = detail.decode() if isinstance(detail, bytes) else str(detail)
        return text.split(": ")[0]


def _fallback(pattern: str) -> object:
    try:
        return compile_re2(pattern)
    except Re2SyntaxError as exc:
        return exc.kind


def _compare(pattern: str, subjects: list[str]) -> list[str]:
    """Where the two engines disagree on ``pattern`` (empty: they agree everywhere)."""
    reference, fallback = _reference(pattern), _fallback(pattern)
    if isinstance(reference, str) or isinstance(fallback, str):
        if reference != fallback:
            return [f"{pattern!r}: google-re2 {reference!r}, fallback {fallback!r}"]
        return []
    disagreements = []
    for subject in subjects:
        expected = reference.fullmatch(subject) is not None  # type: ignore[attr-defined]
        if fallback.fullmatch(subject) != expected:  # type: ignore[attr-defined]
            disagreements.append(f"{pattern!r} on {subject!r}: google-re2 says {expected}")
    return disagreements


def test_the_collection_finds_the_policies_patterns() -> None:
    patterns = collected_patterns()
    # The reference policies' patterns (shared fixtures) and the tests' own are in the set.
    assert ACME_IDENTITY.replace(".", "\\.") not in patterns or len(patterns) > 20
    assert "^https://github.com/lordmacu/[[:alnum:]-]+/.*$" in TRICKY
    assert any("workflows" in pattern for pattern in patterns)
    assert any(pattern.startswith("^refs/") for pattern in patterns)
    assert len(patterns) > 40


@needs_re2
def test_collected_policy_patterns_have_the_same_verdicts() -> None:
    identities = _identities()
    subjects = sorted({edit for identity in identities for edit in _edits(identity)})
    rng = random.Random(7)  # noqa: S311 - reproducible, not secret
    disagreements = []
    for pattern in collected_patterns():
        disagreements += _compare(pattern, subjects + _random_subjects(rng, 10))
    assert disagreements == []


@needs_re2
@pytest.mark.parametrize("pattern", TRICKY)
def test_tricky_patterns_have_the_same_verdicts(pattern: str) -> None:
    if pattern in DIVERGENT:
        pytest.skip("a documented refusal: see test_what_only_re2_runs_is_refused")
    rng = random.Random(pattern)  # noqa: S311 - reproducible, not secret
    # fmt: off
    subjects = [
        *_edits(ACME_IDENTITY),
        *_random_subjects(rng, 60),
        "a", "A", "b", "ab", "aa", "k", "K", "\u212a", "s", "\u017f", "ß", "ẞ", "\u03c3",
        "\u03c2", "\u03a3", "a.b", "a\n", "\n", "", "1", "a{2}", "a{,3}", "{", "{1}", "\\",
        "a\\", "é", "/", "\v", "a" * 30, "a" * 1000, "a@b.com", "refs/tags/v1.2.3",
    ]
    # fmt: on
    assert _compare(pattern, subjects) == []


@needs_re2
@pytest.mark.parametrize("pattern", generated_patterns())
def test_generated_patterns_have_the_same_verdicts(pattern: str) -> None:
    rng = random.Random(pattern)  # noqa: S311 - reproducible, not secret
    subjects = [*_random_subjects(rng, 40), "", "a", "ab", "K", "\u212a"]
    assert _compare(pattern, subjects) == []


@needs_re2
@pytest.mark.slow
def test_thousands_of_generated_patterns_have_the_same_verdicts() -> None:
    rng = random.Random(1)  # noqa: S311 - reproducible, not secret
    disagreements = []
    for index in range(5000):
        pattern = _random_pattern(rng)
        subjects = [*_random_subjects(random.Random(index), 60), "", "a", "ab", "K", "aa"]  # noqa: S311
        disagreements += _compare(pattern, subjects)
    assert disagreements == []


# What google-re2 accepts and the fallback refuses, never reads differently: \C (a single byte
# of the UTF-8 text).
DIVERGENT = ["\\C", "a\\Cb", "[a]\\C*"]


@needs_re2
@pytest.mark.parametrize("pattern", DIVERGENT)
def test_what_only_re2_runs_is_refused(pattern: str) -> None:
    assert not isinstance(_reference(pattern), str)
    with pytest.raises(Re2SyntaxError) as caught:
        compile_re2(pattern)
    assert caught.value.kind == UNSUPPORTED
    assert "use . instead" in str(caught.value)


def _re2_ranges(name: str) -> str:
    """What google-re2's ``\\p{name}`` matches, in the tables' notation."""
    codes = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, codes))
    options = re2.Options()
    options.log_errors = False
    found = re2.compile(f"\\p{{{name}}}+", options=options).finditer(text)
    ranges = [(codes[m.start()], codes[m.end() - 1]) for m in found]
    if name in ("C", "Cs"):
        ranges = sorted([*ranges, (0xD800, 0xDFFF)])
        merged: list[tuple[int, int]] = []
        for lo, hi in ranges:
            if merged and lo <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        ranges = merged
    return " ".join(f"{lo:x}" if lo == hi else f"{lo:x}-{hi:x}" for lo, hi in ranges)


@needs_re2
@pytest.mark.parametrize("name", ["L", "Lu", "Nd", "Zs", "Greek", "Han", "Latin", "Cyrillic"])
def test_the_unicode_tables_are_google_re2s(name: str) -> None:
    # scripts/re2_tables.py regenerates them; the slow test below compares every table.
    table = re2_tables.CATEGORIES.get(name, re2_tables.SCRIPTS.get(name))
    assert table == _re2_ranges(name)


@needs_re2
@pytest.mark.slow
def test_every_unicode_table_and_fold_orbit_is_google_re2s() -> None:
    for name in [*re2_tables.CATEGORIES, *re2_tables.SCRIPTS]:
        table = re2_tables.CATEGORIES.get(name, re2_tables.SCRIPTS.get(name))
        assert table == _re2_ranges(name), name
    options = re2.Options()
    options.log_errors = False
    codes = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    text = "".join(map(chr, codes))
    for orbit in re2_tables.FOLDING["orbits"].split(","):
        first = orbit.split()[0]
        found = re2.compile(f"(?i)\\x{{{first}}}", options=options).finditer(text)
        assert sorted(f"{ord(m.group(0)):x}" for m in found) == sorted(orbit.split())


def test_a_hostile_pattern_and_identity_stay_linear() -> None:
    # Exponential for a backtracking engine; the NFA simulation reads each character once.
    pattern = compile_re2("^(a|a?)+(a*)*(a|aa)*b$")
    started = time.perf_counter()
    assert not pattern.fullmatch("a" * 20_000)
    assert time.perf_counter() - started < 5


def test_the_program_size_is_bounded() -> None:
    # Accepted by RE2's parser (1000 copies in all) but too large for this engine's bound.
    with pytest.raises(Re2SyntaxError) as caught:
        compile_re2("(?:" + "[ab]" * 30 + "){1000}")
    assert caught.value.kind == "pattern too large - compile failed"
    assert MAX_PROGRAM_SIZE < 30 * 1000


@pytest.mark.usefixtures("without_re2")
def test_the_policy_runs_on_the_fallback_without_re2(tmp_path: Path) -> None:
    assert identity_pattern.engine() == "pure-python"
    text = (
        '[[authors]]\nowner = "acme"\n'
        'identity_regexp = "^https://github\\\\.com/acme/[[:alnum:]-]+/\\\\.github/workflows/'
        'release\\\\.yml@refs/tags/v\\\\p{N}.*$"\nsource_ref = "^refs/tags/v.*$"\n'
    )
    (author,) = parse_policy(text, path=tmp_path / "trusted_keys.toml").authors
    assert author.identity_matches(ACME_IDENTITY)
    assert not author.identity_matches(ACME_IDENTITY + "\n")
    assert not author.identity_matches(ACME_IDENTITY.replace("acme", "evil"))
    assert author.source_ref_matches("refs/tags/v1.0.0")
    assert not full_match("^a$", "a\n")


@pytest.mark.usefixtures("without_re2")
def test_the_fallback_refuses_as_re2_does_with_the_line(tmp_path: Path) -> None:
    for pattern, kind in (
        ("^(?=a)a$", "invalid perl operator"),
        ("^(a)\\\\1$", "invalid escape sequence"),
        ("[[:foo:]]", "invalid character class range"),
        ("a{1001}", "invalid repetition size"),
    ):
        text = f'[[authors]]\nowner = "acme"\nidentity_regexp = "{pattern}"\n'
        with pytest.raises(NexoError) as caught:
            parse_policy(text, path=tmp_path / "trusted_keys.toml")
        assert caught.value.kind == "policy_invalid"
        assert f"{tmp_path / 'trusted_keys.toml'}:3:" in caught.value.message
        assert kind in caught.value.message
        (finding,) = lint_policy_source(text, path="trusted_keys.toml").diagnostics
        assert finding.code == "NXT007"
        assert kind in finding.message


@pytest.mark.usefixtures("without_re2")
def test_script_classes_and_case_folding_come_from_re2s_tables(tmp_path: Path) -> None:
    text = '[[authors]]\nowner = "acme"\nidentity_regexp = "^(?i)\\\\p{Greek}+-k$"\n'
    (author,) = parse_policy(text, path=tmp_path / "trusted_keys.toml").authors
    assert author.identity_matches("\u03b1\u03b2\u03b3-K")
    assert author.identity_matches("\u03b1\u03b2\u03b3-\u212a")  # the Kelvin sign folds to k
    assert not author.identity_matches("abc-k")


@needs_re2
def test_with_re2_installed_it_is_the_engine() -> None:
    identity_pattern._re2.cache_clear()
    assert identity_pattern.engine() == "google-re2"


def test_google_re2_is_no_hard_dependency() -> None:
    # musllinux (Alpine) has no google-re2 wheel and its source build needs abseil: pip could
    # not install nexo-pkg there with google-re2 among the unconditional requirements.
    from importlib.metadata import requires

    requirements = requires("nexo-pkg") or []
    re2_requirements = [r for r in requirements if r.replace("_", "-").startswith("google-re2")]
    assert re2_requirements
    assert all("extra ==" in requirement for requirement in re2_requirements)
    assert any('extra == "re2"' in requirement for requirement in re2_requirements)
