"""Keys written again and 64-bit integers in agents.yaml and agents.d drop-ins, as the daemon
reads them.

serde_yaml 0.9.34 (dtolnay/serde-yaml at tag 0.9.34, the daemon's Cargo.lock): a `Value`
mapping refuses a key equal to an earlier one (``src/mapping.rs`` ``visit_map``,
``DuplicateKeyError``) but holds ``!x id`` and ``id`` apart (a tagged key is another value); a
``BTreeMap<String, Value>`` read straight from the text (an agent's ``extensions_config`` in
an agents.d drop-in, lordmacu/nexo-rs eec3f33 ``crates/config/src/types/agents.rs:366``,
``crates/config/src/lib.rs`` ``merge_agents_drop_in``) is serde's map visitor: it reads every
value, then inserts it, the last one winning. Either way the value written after the repeated
key is read, and what the daemon refuses in it refuses the file. A value under such an id is a
``Value``, where an integer past 64 bits is refused (``src/de.rs`` ``visit_int`` hands it over
as a u128/i128, which ``src/value/de.rs`` has no visitor for); the id itself is read as text
(``src/de.rs`` ``deserialize_str``).

Every case here was also run through serde_yaml 0.9.34 itself, built from that tag with the
daemon's ``ExtensionsConfigFile`` and an ``AgentsConfig`` of ``id``/``model``/
``extensions_config``, read as ``deserialize_yaml_with_schema_version`` and
``merge_agents_drop_in`` read them: the verdicts below are its verdicts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_daemon_yaml import _plain
from .test_microapp_config import MODEL, lint_yaml

DROP_IN = "agents.d/10-a.yaml"


def _agent(settings: str) -> str:
    return "agents:\n  - id: a\n" + MODEL + "    extensions_config:\n" + settings


def _errors(tmp_path: Path, name: str, text: str) -> tuple[int, list[tuple[str, int]]]:
    code, found = lint_yaml(tmp_path, name, text)
    return code, [(item[0], item[1]) for item in found if item[2] == "error"]


@pytest.mark.parametrize(
    "later",
    [
        "!!int x",  # src/de.rs visit_scalar: `!!int` text that is no integer
        "!!bool yes",
        "{k: 1, k: 2}",  # a `Value` mapping: DuplicateKeyError
        "18446744073709551616",  # past u64: "invalid type: integer ... as u128"
    ],
)
def test_the_value_after_an_id_written_again_in_a_drop_in_is_read(
    tmp_path: Path, later: str
) -> None:
    """The last definition wins, but serde's map visitor reads it first: what the daemon
    refuses there stops its boot, whichever definition comes first."""
    _plain(tmp_path)
    text = _agent(f"      agent_creator: 1\n      agent_creator: {later}\n")
    code, errors = _errors(tmp_path, DROP_IN, text)
    assert (code, errors) == (1, [("NX222", 6)])
    # The same value first, a good one after it: refused as well (held before this change).
    text = _agent(f"      agent_creator: {later}\n      agent_creator: 1\n")
    assert _errors(tmp_path, DROP_IN, text) == (1, [("NX222", 5)])
    # A good value after the repeated id is only the NX232 warning.
    code, found = lint_yaml(
        tmp_path, DROP_IN, _agent("      agent_creator: 1\n      agent_creator: 2\n")
    )
    assert (code, [item for item in found if item[0] == "NX232"]) == (0, [("NX232", 6, "warning")])


def test_the_value_after_a_key_a_value_holds_apart_is_read(tmp_path: Path) -> None:
    """agents.yaml reads `extensions_config` into a `Value` first: `!x agent_creator` and
    `agent_creator` are two keys there (then one id, the last winning), and both values are
    read, so a bad second value refuses the file."""
    _plain(tmp_path)
    text = _agent("      !x agent_creator: 1\n      agent_creator: !!int x\n")
    code, errors = _errors(tmp_path, "agents.yaml", text)
    assert (code, errors) == (1, [("NX222", 6)])
    text = _agent("      !x agent_creator: 1\n      agent_creator: 2\n")
    assert _errors(tmp_path, "agents.yaml", text) == (0, [])


@pytest.mark.parametrize(
    ("name", "text", "line"),
    [
        (
            "agents.yaml",
            _agent("      !x agent_creator: 1\n      agent_creator: 2\n      'agent_creator': 3\n"),
            7,
        ),
        ("extensions.yaml", "extensions:\n  entries:\n    !x a: {}\n    a: {}\n    'a': {}\n", 5),
    ],
)
def test_a_key_repeating_a_repeated_key_is_refused(
    tmp_path: Path, name: str, text: str, line: int
) -> None:
    """`'x'` after `!x x` and `x`: the `Value` holds the first two apart, and the third equals
    the second ("duplicate entry with key", src/mapping.rs)."""
    _plain(tmp_path)
    assert _errors(tmp_path, name, text) == (1, [("NX222", line)])


@pytest.mark.parametrize(
    ("settings", "refused"),
    [
        ("{agent_creator: 18446744073709551616}", True),  # the id's value is a `Value`
        ("{agent_creator: -9223372036854775809}", True),
        ("{agent_creator: 18446744073709551615}", False),  # u64::MAX fits
        ("{agent_creator: '18446744073709551616'}", False),  # a string
        ("{18446744073709551616: 1}", False),  # the id is read as its text
    ],
)
def test_an_integer_past_64_bits_as_an_ids_value_in_a_drop_in(
    tmp_path: Path, settings: str, refused: bool
) -> None:
    _plain(tmp_path)
    text = "agents:\n  - id: a\n" + MODEL + f"    extensions_config: {settings}\n"
    assert _errors(tmp_path, DROP_IN, text) == ((1, [("NX222", 4)]) if refused else (0, []))


# -- an agent's required fields, typed as `AgentConfig` types them ------------------------------
# lordmacu/nexo-rs eec3f33 crates/config/src/types/agents.rs:31 `id: String`, :38
# `model: ModelConfig`, :936-941 `ModelConfig { provider: String, model: String }`,
# `deny_unknown_fields`. Through a `Value` (agents.yaml) a `String` is a YAML string only
# (serde_yaml 0.9.34 src/value/de.rs `deserialize_string`); a drop-in takes any scalar's text
# (src/de.rs `deserialize_str` reads the value, never the tag or the type).
@pytest.mark.parametrize(
    ("value", "in_agents_yaml", "in_a_drop_in"),
    [
        ("a", True, True),
        ("'3'", True, True),
        ("!x a", True, True),  # untagged first: a string
        ("!!str 3", True, True),
        ("3", False, True),
        ("0x3", False, True),
        ("true", False, True),
        ("~", False, True),
        ("", False, True),
        ("!x 3", False, True),
        ("!!int 3", False, True),
        ("!!int x", False, True),  # refused through a `Value`: `!!int` that is no integer
        ("!!null ''", False, True),
        ("[a]", False, False),
        ("{a: b}", False, False),
    ],
)
def test_an_agents_id_and_model_strings_are_typed_as_the_daemon_reads_them(
    tmp_path: Path, value: str, in_agents_yaml: bool, in_a_drop_in: bool
) -> None:
    _plain(tmp_path)
    texts = [
        f"agents:\n  - id: {value}\n" + MODEL,
        f"agents:\n  - id: a\n    model: {{provider: {value}, model: m}}\n",
        f"agents:\n  - id: a\n    model:\n      provider: p\n      model: {value}\n",
    ]
    for name, accepted in (("agents.yaml", in_agents_yaml), (DROP_IN, in_a_drop_in)):
        for text in texts:
            code, errors = _errors(tmp_path, name, text)
            assert (code == 0, name, text) == (accepted, name, text)
            assert accepted or len(errors) == 1
            assert accepted or errors[0][0] in ("NX221", "NX222")


@pytest.mark.parametrize(
    ("model", "line", "code"),
    [
        ("3", 3, "NX221"),  # "invalid type: integer `3`, expected struct ModelConfig"
        ("~", 3, "NX221"),  # null: an empty map, `missing field provider`
        ("", 3, "NX221"),
        ("[]", 3, "NX221"),
        ("{model: m}", 3, "NX221"),  # missing field `provider`
        ("{provider: p}", 3, "NX221"),
        ("{provider: p, model: m, region: x}", 3, "NX220"),  # deny_unknown_fields
        # No merge keys (serde_yaml 0.9 applies none unless asked): `<<` is an unknown key
        # and `provider` is missing.
        ("{<<: {provider: p}, model: m}", 3, "NX220 NX221"),
    ],
)
def test_an_agents_model_is_a_model_config(
    tmp_path: Path, model: str, line: int, code: str
) -> None:
    _plain(tmp_path)
    text = f"agents:\n  - id: a\n    model: {model}\n"
    for name in ("agents.yaml", DROP_IN):
        found = _errors(tmp_path, name, text)
        assert found[0] == 1
        assert {item[0] for item in found[1]} == set(code.split())
        assert {item[1] for item in found[1]} == {line}


@pytest.mark.parametrize(
    "text",
    [
        "!!null agents:\n  - id: a\n" + MODEL,  # the file's key
        "agents:\n  - !!int id: a\n" + MODEL,  # an agent's field name
        "agents:\n  - id: a\n    model: {!!bool provider: p, model: m}\n",  # a model's
        "agents:\n  - id: a\n" + MODEL + "    extensions_config: {!!int agent_creator: 1}\n",
    ],
)
def test_a_key_a_drop_in_reads_as_text_takes_any_tag(tmp_path: Path, text: str) -> None:
    """`deserialize_identifier` is `deserialize_str` (serde_yaml 0.9.34 src/de.rs): a drop-in
    reads a field name or a `String` key as its text; through a `Value` (agents.yaml) the
    `!!int`/`!!bool`/`!!null` tag is read and the file refused."""
    _plain(tmp_path)
    assert _errors(tmp_path, DROP_IN, text)[0] == 0
    code, errors = _errors(tmp_path, "agents.yaml", text)
    assert code == 1
    assert [item[0] for item in errors] == ["NX222"]
