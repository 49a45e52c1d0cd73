"""Properties of ``nexo plugin trust add|remove`` on any ``trusted_keys.toml`` (comments on
every line, ``[[authors]]`` tables or an inline array, LF or CRLF lines, a BOM, no final
newline): the policy read back is the old one with exactly the entry added or the owner's
entries removed; every comment survives but those inside a removed entry; the BOM and the
line endings stay; a refusal is ``policy_invalid`` or ``usage`` with the file unchanged."""

from __future__ import annotations

import dataclasses
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nexo_pkg.trust.policy import AuthorPolicy, parse_policy
from nexo_pkg.trust.policy_edit import add_author, remove_authors

from .strategies import attempt

OWNERS = ("bob", "acme", "Bob", "acme.io")
NEW = AuthorPolicy(owner="acme", identity_regexp="^x$", repos=("echo",))
_MARKER = re.compile(r"# [ci]\d+\b")
_BREAK = re.compile(r"\r\n|\r|\n")


@dataclasses.dataclass(frozen=True)
class Policy:
    text: str
    entry_comments: dict[str, str]  # marker -> owner of the entry it stands in
    #: The comments inside ``authors = [...]``, which go with the array when it goes.
    array_comments: frozenset[str] = frozenset()


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    count = [0]
    entry_comments: dict[str, str] = {}

    def comment(owner: str | None = None) -> str:
        count[0] += 1
        if owner is None:
            return f"# c{count[0]}"
        entry_comments[f"# i{count[0]}"] = owner
        return f"# i{count[0]}"

    def maybe(owner: str | None = None) -> str:
        return f"  {comment(owner)}" if draw(st.booleans()) else ""

    lines = [comment() for _ in range(draw(st.integers(0, 2)))]
    lines.append(f'schema_version = "1.0"{maybe()}')
    if draw(st.booleans()):
        lines.append(f'default = "{draw(st.sampled_from(["warn", "require", "ignore"]))}"{maybe()}')
    entries = draw(
        st.lists(st.tuples(st.sampled_from(OWNERS), st.sampled_from(["one", "other"])), max_size=3)
    )
    inline = bool(entries) and draw(st.integers(0, 3)) == 0
    if inline:
        lines.append(f"authors = [{maybe()}")
        for owner, repo in entries:
            lines.append(
                f'  {{owner = "{owner}", identity_regexp = "^{owner}$", repos = ["{repo}"]}},'
                f"{maybe(owner)}"
            )
        lines.append("]")
    else:
        for owner, repo in entries:
            if draw(st.booleans()):
                lines.append("")
            lines.append(f"[[authors]]{maybe(owner)}")
            if draw(st.booleans()):
                lines.append(f"  {comment(owner)}")
            lines.append(f'owner = "{owner}"{maybe(owner)}')
            lines.append(f'identity_regexp = "^{owner}$"{maybe(owner)}')
            lines.append(f'repos = ["{repo}"]{maybe(owner)}')
    lines += [comment() for _ in range(draw(st.integers(0, 2)))]
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines)
    if draw(st.integers(0, 3)) != 0:
        text += eol
    if draw(st.integers(0, 6)) == 0 and len(lines) > 2:
        # One line ended the other way, as an editor that kept a pasted line's ending.
        first = text.index(eol)
        text = text[:first] + ("\n" if eol == "\r\n" else "\r\n") + text[first + len(eol) :]
    if draw(st.integers(0, 5)) == 0:
        text = "\ufeff" + text
    array = text[text.find("authors = [") :] if inline else ""
    return Policy(text, entry_comments, frozenset(_MARKER.findall(array[: array.find("]")])))


def _authors(text: str, path: Path) -> list[AuthorPolicy]:
    return [dataclasses.replace(a, line=0) for a in parse_policy(text, path=path).authors]


def check_policy_edit(policy: Policy, remove: str | None) -> None:
    raw = policy.text.encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="nexo-policy-") as tmp:
        path = Path(tmp) / "trusted_keys.toml"
        path.write_bytes(raw)
        before = _authors(policy.text.removeprefix("\ufeff"), path)
        if remove is None:
            result, error = attempt(lambda: add_author(path, NEW))
        else:
            result, error = attempt(lambda: remove_authors(path, remove))
        if error is not None:
            assert error.kind in {"usage", "policy_invalid"}, error
            assert path.read_bytes() == raw
            assert [child.name for child in Path(tmp).iterdir()] == [path.name]
            assert error.kind == "usage", error.message  # a valid policy is edited
            return
        assert result is not None
        new = path.read_bytes().decode("utf-8")
        after = _authors(new.removeprefix("\ufeff"), path)
    if remove is None:
        expected = before if NEW in before else [*before, NEW]
        dropped: set[str] = set()
    else:
        expected = [a for a in before if a.owner.casefold() != remove.casefold()]
        dropped = {m for m, owner in policy.entry_comments.items() if owner.casefold() == remove}
        if not expected:
            dropped |= policy.array_comments
    assert after == expected
    if result.changed == 0:
        assert new == policy.text
        return
    old_markers, new_markers = _MARKER.findall(policy.text), _MARKER.findall(new)
    assert set(old_markers) - set(new_markers) <= dropped
    assert new_markers == [m for m in old_markers if m in new_markers]
    assert new.startswith("\ufeff") == policy.text.startswith("\ufeff")
    # Every line that was there and stays keeps its own ending; added lines end as most do.
    kept = [line for line in policy.text.splitlines(keepends=True) if line in new]
    new_lines = new.splitlines(keepends=True)
    assert all(line in new_lines or not line.endswith("\n") for line in kept)
    if len(set(_BREAK.findall(policy.text))) == 1:
        assert set(_BREAK.findall(new)) == set(_BREAK.findall(policy.text))


_removals = st.none() | st.sampled_from(["bob", "acme", "nobody"])


@given(policies(), _removals)
def test_trust_add_remove_change_only_the_entries(policy: Policy, remove: str | None) -> None:
    check_policy_edit(policy, remove)


@pytest.mark.slow
@settings(max_examples=5_000)
@given(policies(), _removals)
def test_trust_add_remove_change_only_the_entries_at_scale(
    policy: Policy, remove: str | None
) -> None:
    check_policy_edit(policy, remove)
