"""The rules of the file and structure layer (codes ``NX001``-``NX099``).

The semantic rules (``NX100`` and up) live in :mod:`nexo_pkg.manifest.rules`. Codes here are
stable: a retired code is never reused.
"""

from __future__ import annotations

from nexo_pkg.core.diagnostics import Rule

TOML_SYNTAX = Rule(
    code="NX001",
    name="toml-syntax",
    severity="error",
    summary="The file is not valid TOML.",
    what="Parses the file as TOML 1.0. The first syntax error is reported at the parser's line "
    "and column; nothing else can be checked until it is fixed.",
    why="The daemon refuses a manifest it cannot parse, so the plugin would not load at all.",
    example='[plugin]\nid = "weather\n',
    fix='Close the string, array or table the parser points at: `id = "weather"`.',
)

DUPLICATE_KEY = Rule(
    code="NX002",
    name="duplicate-key",
    severity="error",
    summary="A key or table is defined twice.",
    what="Reports every key assigned twice in the same table and every `[table]` header declared "
    "twice (TOML forbids both).",
    why="TOML parsers reject the whole document; the daemon would not load the plugin.",
    example='[plugin]\nid = "weather"\nid = "forecast"\n',
    fix="Delete one of the two definitions, or merge the two tables into one.",
)

INVALID_ENCODING = Rule(
    code="NX003",
    name="invalid-encoding",
    severity="error",
    summary="The file is not UTF-8 text.",
    what="Checks that the file decodes as UTF-8 and holds no NUL bytes. The position of the "
    "first bad byte is reported.",
    why="TOML documents must be UTF-8; a binary or mis-encoded file cannot be a manifest.",
    example="[plugin]\nname = <the byte 0xFF>\n",
    fix="Save the file as UTF-8 (most editors: 'Save with encoding'), or lint the right file.",
)

FILE_TOO_LARGE = Rule(
    code="NX004",
    name="file-too-large",
    severity="error",
    summary="The file is too large for nexo-pkg to read.",
    what="Refuses to parse files above 4 MiB; real manifests are a few kilobytes.",
    why="The daemon reads a manifest whole whatever its size, but a file this size is not a "
    "manifest, and nexo-pkg does not read it into memory to find out.",
    example="A 100 MB log file passed by mistake: `nexo plugin lint build.log`.",
    fix="Lint the plugin's manifest (`plugin.toml` or `nexo-plugin.toml`) instead, or remove "
    "the generated content.",
    beyond_daemon=True,
)

NESTING_TOO_DEEP = Rule(
    code="NX005",
    name="nesting-too-deep",
    severity="error",
    summary="Values are nested, or keys dotted, deeper than the daemon's TOML parser allows.",
    what="Reports the array or inline table that opens the 80th level of nesting, and a "
    "dotted key of 80 parts or more (`a.b.c…` in a `key = value` line, an inline table or a "
    "`[table]` header): the daemon's TOML parser (`toml_edit`, recursion limit 80) stops "
    "there with `recursion limit exceeded`.",
    why="The daemon cannot parse the file, so the plugin would not load; no manifest field "
    "nests more than a few levels.",
    example="x = [[[[[[[[[[ ... ]]]]]]]]]]  (80 levels), or a.b.c. … .z = 1  (80 parts)",
    fix="Flatten the value or the key; no manifest field needs more than a few levels.",
)

SHADOWED_MANIFEST = Rule(
    code="NX006",
    name="shadowed-manifest",
    severity="warning",
    summary="Another manifest in the same directory takes precedence over this one.",
    what="Reports a `plugin.toml` that sits beside a `nexo-plugin.toml`. The daemon reads both "
    "names; its discovery meets `nexo-plugin.toml` first (file-name order) and ignores a "
    "`plugin.toml` that declares the same plugin id.",
    why="The daemon only logs the duplicate, so edits to the shadowed file silently have no "
    "effect; `pack`, `check` and `install` use the file the daemon uses.",
    example='weather/nexo-plugin.toml and weather/plugin.toml, both with `id = "weather"`',
    fix="Keep one manifest: delete the stale file (or rename `nexo-plugin.toml` to "
    "`plugin.toml`, the daemon's canonical name).",
    beyond_daemon=True,
)

LARGE_MANIFEST = Rule(
    code="NX007",
    name="large-manifest",
    severity="warning",
    summary="The file is far larger than a manifest usually is.",
    what="Warns about files above 1 MiB (they are still checked; above 4 MiB NX004 refuses them).",
    why="The daemon reads the whole file, but a manifest this size nearly always carries "
    "generated or embedded data by mistake, and it is read at every daemon start.",
    example="A manifest with a 2 MB `input_schema` pasted into it.",
    fix="Move generated or embedded data out of the manifest.",
    beyond_daemon=True,
)

UNREADABLE_FILE = Rule(
    code="NX008",
    name="unreadable-file",
    severity="error",
    summary="A manifest the search found cannot be read.",
    what="Reports a manifest that cannot be opened or read: no read permission, a dangling "
    "symlink (met by the search or named on the command line), an I/O error; and a "
    "directory below a PATH that the search cannot list, whose manifests go unlinted. The "
    "other manifests of the run are linted as usual.",
    why="The daemon cannot read it either, so the plugin would not load.",
    example="plugin.toml -> ../shared/plugin.toml, a symlink whose target was removed",
    fix="Make the file readable (`chmod a+r plugin.toml`), repair the symlink, or remove it.",
)

MISSING_KEY = Rule(
    code="NX010",
    name="missing-key",
    severity="error",
    summary="A required key or table is missing.",
    what="Checks the keys the daemon requires: `[plugin]` with `id`, `version`, `name`, "
    "`description` and `min_nexo_version`, and the required keys of every optional table "
    "that is present (for example `kind` and `adapter` in `[[plugin.channels.register]]`).",
    why="The daemon's parser stops at the first missing field; the plugin would not load.",
    example='[plugin]\nid = "weather"\nversion = "0.1.0"\n',
    fix='Add the missing keys: `name = "Weather"`, `description = "..."`, '
    '`min_nexo_version = ">=0.1.0"`.',
)

UNKNOWN_KEY = Rule(
    code="NX011",
    name="unknown-key",
    severity="error",
    summary="A key the manifest format does not know.",
    what="Every table of the manifest is closed: a key that is not part of the format is "
    "reported at the key, with the closest known key as a suggestion.",
    why="The daemon parses every table with `deny_unknown_fields`: a typo such as "
    "`min_nexo_verison` makes the whole manifest fail to load.",
    example='[plugin.sandbox]\nenabled = true\nnetwrok = "deny"\n',
    fix="Fix the spelling (`network`) or delete the key.",
)

WRONG_TYPE = Rule(
    code="NX012",
    name="wrong-type",
    severity="error",
    summary="A value has the wrong TOML type.",
    what="Checks the TOML type of every value: string, integer, boolean, array or table. "
    "Integer keys reject floats (`8080.0`) and string keys reject dates and times.",
    why="The daemon's parser rejects the manifest at the first value of the wrong type.",
    example="[plugin.capabilities.http_server]\nport = 8080.0\n",
    fix="Write the value with the expected type: `port = 8080`.",
)

INVALID_VALUE = Rule(
    code="NX013",
    name="invalid-value",
    severity="error",
    summary="A value is not one of the allowed choices.",
    what="Checks keys with a fixed set of values, such as `network` (`deny` or `host`).",
    why="Choices are case-sensitive and the daemon refuses any other spelling.",
    example='[plugin.sandbox]\nnetwork = "Deny"\n',
    fix='Use one of the listed values exactly: `network = "deny"`.',
)

OUT_OF_RANGE = Rule(
    code="NX014",
    name="out-of-range",
    severity="error",
    summary="A number is outside the range its key accepts.",
    what="Checks the numeric range of integer keys, e.g. ports (0-65535) and non-negative counts.",
    why="The daemon stores these values in unsigned integers and refuses anything outside.",
    example="[plugin.capabilities.http_server]\nport = 70000\n",
    fix="Use a value in the documented range.",
)

SCHEMA_VIOLATION = Rule(
    code="NX015",
    name="schema-violation",
    severity="error",
    summary="The manifest breaks another constraint of the JSON Schema.",
    what="Reports any constraint of `schemas/nexo-plugin.schema.json` not covered by a more "
    "specific rule. Today every pattern and length of the schema restates a rule of its own "
    "(`NX100`, `NX110`, `NX162`, ...), which is reported instead; this code is the fallback.",
    why="The schema mirrors what the daemon accepts: a constraint it states is one the daemon "
    "enforces.",
    example='[plugin]\nversion = "1.0"   # NX101 here; NX015 only where no specific rule applies',
    fix="Follow the message; `nexo plugin schema` prints the full schema.",
)

UNPARSED_CODES = frozenset(
    rule.code
    for rule in (TOML_SYNTAX, DUPLICATE_KEY, INVALID_ENCODING, FILE_TOO_LARGE, NESTING_TOO_DEEP)
) | {"NX222"}
"""Findings that mean the file was not parsed, so nothing else was checked: as ruff reports
a syntax error whatever is selected, neither ``--select``/``--ignore`` (flags, settings,
``per-file-ignores``) nor a ``# nexo: ignore`` comment drops them. ``NX222`` is the same for
the daemon's YAML config files (``config-yaml-syntax``: not YAML to its reader, a key twice)."""

CORE_RULES: tuple[Rule, ...] = (
    TOML_SYNTAX,
    DUPLICATE_KEY,
    INVALID_ENCODING,
    FILE_TOO_LARGE,
    NESTING_TOO_DEEP,
    SHADOWED_MANIFEST,
    LARGE_MANIFEST,
    UNREADABLE_FILE,
    MISSING_KEY,
    UNKNOWN_KEY,
    WRONG_TYPE,
    INVALID_VALUE,
    OUT_OF_RANGE,
    SCHEMA_VIOLATION,
)
