"""nexo's version model against the Rust ``semver`` crate itself, question by question.

``semver_probe/`` is a small Rust program built here, offline, against the crate as Debian
packages it (``librust-semver-dev``, 1.0.x as the daemon locks, under
``/usr/share/cargo/registry``) through a cargo ``[source]`` replacement. The probe and
:mod:`nexo_pkg.core.version` / :mod:`nexo_pkg.core.versionreq` answer the same inputs:
parsing (accepted or not, the display, the error message), ordering (``Ord::cmp``, build
metadata included) and requirement matching, over hand-picked cases and a few thousand
generated ones. scripts/test.sh installs the package on CI; elsewhere the test is skipped
with the reason when cargo or the crate is absent.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nexo_pkg.core.version import VersionError, compare_versions, parse_version
from nexo_pkg.core.versionreq import parse_version_req

from .version_cases import ASCENDING

PROBE_SOURCE = Path(__file__).parent / "semver_probe"
DEBIAN_REGISTRY = Path("/usr/share/cargo/registry")

CARGO_CONFIG = f"""\
[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "{DEBIAN_REGISTRY}"

[net]
offline = true
"""


def _skip_reason() -> str | None:
    if shutil.which("cargo") is None:
        return "cargo is not installed: the semver probe cannot be built"
    if not any(DEBIAN_REGISTRY.glob("semver-1.*")):
        return (
            f"the Rust semver crate is not in {DEBIAN_REGISTRY} "
            "(apt-get install librust-semver-dev)"
        )
    return None


class Probe:
    """The built probe, answering one line per question."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def ask(self, questions: list[str]) -> list[str]:
        result = subprocess.run(
            [str(self.binary)],
            input="".join(f"{question}\n" for question in questions),
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        answers = result.stdout.splitlines()
        assert len(answers) == len(questions)
        return answers


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Probe:
    reason = _skip_reason()
    if reason is not None:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("semver-probe")
    shutil.copytree(PROBE_SOURCE, work, dirs_exist_ok=True)
    (work / ".cargo").mkdir()
    (work / ".cargo" / "config.toml").write_text(CARGO_CONFIG, encoding="utf-8")
    env = {**os.environ, "CARGO_TARGET_DIR": str(work / "target"), "CARGO_TERM_COLOR": "never"}
    subprocess.run(
        ["cargo", "build", "--release", "--offline", "--quiet"],
        cwd=work,
        env=env,
        check=True,
        timeout=600,
    )
    return Probe(work / "target" / "release" / "semver-probe")


def _hex(text: str) -> str:
    return text.encode("utf-8").hex()


# Debian's crate (1.0.14) words the refusal of an empty string as an end of input; the
# daemon's (1.0.28, its Cargo.lock at eec3f33) says "empty string, expected a semver version"
# (semver's src/error.rs, `ErrorKind::Empty`), which nexo follows. Both refuse it.
EMPTY_WORDING = {
    "err unexpected end of input while parsing major version number": (
        "err empty string, expected a semver version"
    ),
}


def _daemon_wording(command: str, text: str, answer: str) -> str:
    return EMPTY_WORDING.get(answer, answer) if command == "V" and not text else answer


def _ours_version(text: str) -> str:
    try:
        return f"ok {parse_version(text)}"
    except VersionError as error:
        return f"err {error}"


def _ours_requirement(text: str) -> str:
    try:
        return f"ok {parse_version_req(text)}"
    except VersionError as error:
        return f"err {error}"


# The cases of the daemon-parity reading: build metadata ordered (semver's src/impls.rs,
# `impl Ord for BuildMetadata`), the refusals core/versionreq.py must keep.
VERSIONS = [
    *ASCENDING,
    "0.1.5",
    "0.1.5+build.1",
    "1.0.0-alpha+b1",
    "1.0.0-alpha.beta",
    "1.0.0-01a",
    "1.0.0-x-y",
    "18446744073709551615.0.0",
]
BAD_VERSIONS = [
    "",
    "v1.0.0",
    " 1.0.0",
    "1.0.0 ",
    "\t1.0.0",
    "1.0",
    "01.0.0",
    "1.0.0-01",
    "1.0.0+",
    "1.0.0-",
    "1.0.0+b..1",
    "1.0.0-é",
    "18446744073709551616.0.0",
    "1.0.0\u00a0",
]
REQUIREMENTS = [
    "*",
    "1",
    "1.0",
    "1.0.0",
    "=1.0.0",
    ">=0.1.5",
    ">=0.1.5+build.1",
    ">=1.0",
    "<=1.0",
    ">=1",
    "<=1",
    ">=1.0.0-alpha",
    "<=1.0.0-alpha",
    ">1.0.0-alpha, <1.0.0",
    ">=1.0, <2",
    "~1.0",
    "~1.0.0-alpha",
    "^0.1",
    "^0.0.1",
    "1.*",
    "1.0.x",
    "1.X",
    "=1.*",
    ">=1.0.*",
    " >= 1.0 ,  < 2 ",
    ">=1.0, >=1.0.0-alpha",
    "<=1.0, >=1.0.0-alpha",
    "<=1.0, <=1.0.0-beta",
]
BAD_REQUIREMENTS = [
    "",
    "\t1.0",
    "1.0,\t2.0",
    "1.0 \t",
    "1X",
    "*X",
    "XX",
    "1.X1",
    "1.X.1",
    "1.0X",
    "X1",
    "x.1",
    "1.*.0",
    "*, 1.0",
    "1.0, *",
    "v1.0",
    ">= >1",
    "1.0 2.0",
    ">=01.0",
    ",".join(["1"] * 33),
]


def _generated_versions(rng: random.Random, count: int) -> list[str]:
    numbers = ["0", "1", "2", "10", "01"]
    identifiers = ["alpha", "beta", "1", "2", "11", "0", "00", "01", "a-b", "-", "A", "z9", ""]
    versions = []
    for _ in range(count):
        text = ".".join(rng.choice(numbers) for _ in range(3))
        for sign in ("-", "+"):
            if rng.random() < 0.5:
                parts = rng.randint(1, 3)
                text += sign + ".".join(rng.choice(identifiers) for _ in range(parts))
        versions.append(text)
    return versions


def _generated_requirements(rng: random.Random, count: int) -> list[str]:
    # Mostly what the grammar accepts, with a few refusals mixed in (a tab, a leading zero,
    # an upper-case X fragment, a missing comma).
    operators = ["", "=", ">", ">=", "<", "<=", "~", "^", ">= "] * 4 + ["\t", " "]
    parts = ["0", "1", "2", "3"] * 4 + ["*", "x", "X", "01"]
    pres = [""] * 12 + ["-alpha", "-1", "-alpha.1", "+b1", "X"]
    separators = [", ", ",", " ,"] * 4 + [" "]
    requirements = []
    for _ in range(count):
        comparators = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            numbers = ".".join(rng.choice(parts) for _ in range(rng.randint(1, 3)))
            comparators.append(rng.choice(operators) + numbers + rng.choice(pres))
        text = comparators[0]
        for comparator in comparators[1:]:
            text += rng.choice(separators) + comparator
        requirements.append(text)
    return requirements


def _fuzz_strings(rng: random.Random, count: int) -> Iterator[str]:
    alphabet = "0119..--++*xX,, \t\u00a0av^~=><"
    for _ in range(count):
        yield "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))


def _assert_parsing_agrees(
    probe: Probe, command: str, texts: list[str], ours: Callable[[str], str]
) -> None:
    answers = probe.ask([f"{command} {_hex(text)}" for text in texts])
    disagree = [
        (text, theirs, mine)
        for text, theirs in zip(texts, answers, strict=True)
        if (mine := ours(text)) != _daemon_wording(command, text, theirs)
    ]
    assert disagree == []
    # The sample is not all refusals: both sides of the grammar are exercised.
    accepted = sum(answer.startswith("ok ") for answer in answers)
    assert 500 < accepted < len(texts) - 500


def test_parsing_agrees(probe: Probe) -> None:
    rng = random.Random(37)  # noqa: S311 (a reproducible sample)
    versions = [*VERSIONS, *BAD_VERSIONS, *_generated_versions(rng, 2000)]
    _assert_parsing_agrees(probe, "V", [*versions, *_fuzz_strings(rng, 1000)], _ours_version)
    for text in BAD_VERSIONS:
        assert _ours_version(text).startswith("err "), text


def test_requirement_parsing_agrees(probe: Probe) -> None:
    rng = random.Random(40)  # noqa: S311 (a reproducible sample)
    requirements = [*REQUIREMENTS, *BAD_REQUIREMENTS, *_generated_requirements(rng, 2000)]
    requirements += list(_fuzz_strings(rng, 1000))
    _assert_parsing_agrees(probe, "R", requirements, _ours_requirement)
    for text in BAD_REQUIREMENTS:
        assert _ours_requirement(text).startswith("err "), text


def _valid(texts: list[str]) -> list[str]:
    return [text for text in texts if _ours_version(text).startswith("ok ")]


def test_ordering_agrees(probe: Probe) -> None:
    rng = random.Random(7)  # noqa: S311 (a reproducible sample)
    versions = sorted(set(_valid([*VERSIONS, *_generated_versions(rng, 400)])))
    pairs = list(itertools.product(VERSIONS, repeat=2))
    pairs += [(rng.choice(versions), rng.choice(versions)) for _ in range(4000)]
    answers = probe.ask([f"C {_hex(left)} {_hex(right)}" for left, right in pairs])
    disagree = [
        (left, right, theirs, ours)
        for (left, right), theirs in zip(pairs, answers, strict=True)
        if (ours := str(compare_versions(left, right))) != theirs
    ]
    assert disagree == []
    # Sorting with the model gives the crate's order for the whole sample.
    assert {"-1", "0", "1"} <= set(answers)


def test_matching_agrees(probe: Probe) -> None:
    rng = random.Random(5)  # noqa: S311 (a reproducible sample)
    requirements = [
        text
        for text in [*REQUIREMENTS, *_generated_requirements(rng, 1500)]
        if _ours_requirement(text).startswith("ok ")
    ]
    versions = _valid([*VERSIONS, *_generated_versions(rng, 300)])
    questions = list(itertools.product(REQUIREMENTS, VERSIONS))
    questions += [(rng.choice(requirements), rng.choice(versions)) for _ in range(5000)]
    answers = probe.ask([f"M {_hex(req)} {_hex(version)}" for req, version in questions])
    disagree = [
        (req, version, theirs, ours)
        for (req, version), theirs in zip(questions, answers, strict=True)
        if (ours := str(parse_version_req(req).matches(parse_version(version))).lower()) != theirs
    ]
    assert disagree == []
    assert answers.count("true") > 500
    assert answers.count("false") > 500
