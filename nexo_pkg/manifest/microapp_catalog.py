"""Documentation of the microapp rules (codes ``NX200`` and up), shown by ``--explain``.

``NX200``-``NX219``: the microapp manifest (an extension-shaped ``plugin.toml``, checked as the
daemon's extension manifest parser checks it) and its ``nexo-plugin.toml`` companion.
``NX220`` and up: the daemon's configuration files that decide whether a microapp loads
(``extensions.yaml``, the microapp keys of ``agents.yaml``) and the checks across them.
The structural rules of the manifest (missing key, unknown key, wrong type, range) are the
shared ``NX010``-``NX014``. Codes are stable once released and never reused.
"""

from __future__ import annotations

from nexo_pkg.core.diagnostics import Rule

__all__ = ["MICROAPP_RULES"]

_EXTENSION_PARSER = "`crates/extensions/src/manifest.rs`"

_RULES: tuple[Rule, ...] = (
    # --- the microapp manifest (plugin.toml, extension shape) ---------------------------
    Rule(
        code="NX200",
        name="microapp-invalid-id",
        severity="error",
        summary="a microapp's `plugin.id` is empty or not a lowercase slug of at most 64 bytes",
        what="The extension manifest parser wants `plugin.id` to match `^[a-z][a-z0-9_-]*$` "
        "(hyphens are allowed, unlike plugin ids) and be at most 64 bytes long.",
        why=f"The daemon's extension parser ({_EXTENSION_PARSER}, `validate_id`) refuses the "
        "manifest (`EmptyId`/`InvalidId`); discovery skips the microapp.",
        example='[plugin]\nid = "Weather App"',
        fix='Use lowercase letters, digits, `_` and `-`: `id = "weather-app"`.',
    ),
    Rule(
        code="NX201",
        name="microapp-reserved-id",
        severity="error",
        summary="a microapp claims the id of one of the daemon's native plugins",
        what="Reports `plugin.id` values the daemon reserves: `agent`, `browser`, `core`, "
        "`email`, `heartbeat`, `memory`, `telegram`, `whatsapp`.",
        why="The extension parser refuses them (`ReservedId`) even when the native plugin is "
        "not loaded; discovery skips the microapp.",
        example='[plugin]\nid = "memory"',
        fix='Choose another id: `id = "memory-notes"`.',
    ),
    Rule(
        code="NX202",
        name="microapp-invalid-version",
        severity="error",
        summary="`plugin.version` or `plugin.min_agent_version` is not a SemVer version",
        what="Both must be `MAJOR.MINOR.PATCH[-pre][+build]`, as Rust's `semver::Version` "
        "parses them: no `v` prefix, no requirement operators, no surrounding whitespace.",
        why="The extension parser refuses the manifest (`InvalidVersion`, "
        "`InvalidMinAgentVersion`).",
        example='[plugin]\nversion = "v1.0"',
        fix='Write a full version: `version = "1.0.0"`, `min_agent_version = "0.1.5"`.',
    ),
    Rule(
        code="NX203",
        name="microapp-agent-too-old",
        severity="error",
        summary="`plugin.min_agent_version` is newer than the daemon checked against",
        what="Compares `min_agent_version` with `--nexo-version` (by default the newest daemon "
        "release nexo-pkg knows).",
        why="The daemon refuses a microapp that needs a newer daemon (`AgentTooOld`).",
        example='[plugin]\nmin_agent_version = "9.0.0"',
        fix="Lower `min_agent_version` to the oldest daemon the microapp really needs, or "
        "upgrade the daemon.",
    ),
    Rule(
        code="NX204",
        name="microapp-description-too-long",
        severity="error",
        summary="`plugin.description` has more than 512 characters",
        what="Counts the characters (code points) of `plugin.description`.",
        why="The extension parser refuses the manifest (`DescriptionTooLong`).",
        example='[plugin]\ndescription = "<600 characters>"',
        fix="Shorten the description to at most 512 characters; put the rest in a README.",
    ),
    Rule(
        code="NX205",
        name="microapp-no-capabilities",
        severity="error",
        summary="`[capabilities]` lists no tool, hook, channel, provider or poller",
        what="At least one of `tools`, `hooks`, `channels`, `providers`, `pollers` must have "
        "an entry. The lists are informational otherwise: the daemon registers the tools "
        "the microapp's `initialize` reply advertises.",
        why="The extension parser refuses a manifest without one (`NoCapabilities`).",
        example="[capabilities]\ntools = []",
        fix='List what the microapp offers: `tools = ["get_weather"]`.',
    ),
    Rule(
        code="NX206",
        name="microapp-invalid-capability-name",
        severity="error",
        summary="a `[capabilities]` name is not `^[a-z][a-z0-9_]*$` of at most 64 bytes",
        what="Every entry of `tools`, `hooks`, `channels`, `providers` and `pollers` must be a "
        "lowercase name of letters, digits and `_` (no `-`), at most 64 bytes.",
        why="The extension parser refuses the manifest (`InvalidCapabilityName`).",
        example='[capabilities]\ntools = ["get-weather"]',
        fix='Use underscores: `tools = ["get_weather"]`.',
    ),
    Rule(
        code="NX207",
        name="microapp-duplicate-capability",
        severity="error",
        summary="a `[capabilities]` list names the same entry twice",
        what="Reports the second occurrence of a name within one list.",
        why="The extension parser refuses the manifest (`DuplicateCapabilityName`).",
        example='[capabilities]\ntools = ["ping", "ping"]',
        fix="Delete the repeated entry.",
    ),
    Rule(
        code="NX208",
        name="microapp-invalid-transport",
        severity="error",
        summary="the `[transport]` has an empty command, subject prefix or a bad URL",
        what='`kind = "stdio"` needs a `command` that is not blank; `nats` a non-blank '
        "`subject_prefix`; `http` a `url` of the shape `http(s)://host[:port][/path]`.",
        why="The extension parser refuses the manifest (`EmptyStdioCommand`, "
        "`EmptyNatsPrefix`, `InvalidHttpUrl`).",
        example='[transport]\nkind = "stdio"\ncommand = " "',
        fix='Name the program to run: `command = "python3"`, `args = ["main.py"]`.',
    ),
    Rule(
        code="NX209",
        name="microapp-transport-not-spawned",
        severity="warning",
        summary="a `nats` or `http` transport: the daemon starts only stdio microapps",
        what="Reports `[transport] kind` values other than `stdio`.",
        why="The manifest is valid, but the daemon's boot spawns only `stdio` extensions and "
        "skips the others, so none of the microapp's tools reach an agent.",
        example='[transport]\nkind = "http"\nurl = "http://127.0.0.1:9000"',
        fix='Run the microapp as a stdio child: `kind = "stdio"` with a `command`.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX210",
        name="microapp-invalid-mcp-server",
        severity="error",
        summary="an `[mcp_servers.<name>]` entry has a bad name, no command or a bad URL",
        what="Names must match `^[a-z][a-z0-9_-]*$` (at most 32 bytes); a `stdio` server needs "
        "a non-blank `command`; `streamable_http`, `sse` and `auto` need an http(s) `url`.",
        why="The extension parser refuses the manifest (`InvalidMcpServerName`, "
        "`McpEmptyStdioCommand`, `McpInvalidHttpUrl`).",
        example='[mcp_servers.Search]\ntransport = "stdio"\ncommand = "search-mcp"',
        fix="Rename the server (`[mcp_servers.search]`) and fill in its command or URL.",
    ),
    Rule(
        code="NX211",
        name="microapp-admin-in-extension-manifest",
        severity="error",
        summary="`[capabilities.admin]`, `http_server` or `skills` written in `plugin.toml`",
        what="Reports these keys under the microapp manifest's `[capabilities]`. Several "
        "first-party pages tell authors to write them there; they belong in the companion "
        "`nexo-plugin.toml` as `[plugin.capabilities.admin]` / "
        "`[plugin.capabilities.http_server]`.",
        why="The extension parser has no such keys and denies unknown fields, so the whole "
        "microapp is refused at discovery. The unified manifest described by newer daemon "
        "documentation maps them, but the daemon source nexo-pkg can read does not.",
        example='[capabilities.admin]\nrequired = ["agents_crud"]',
        fix="Move them to `nexo-plugin.toml`: `[plugin.capabilities.admin] required = [...]`, "
        "with the same `plugin.id` as `plugin.toml`.",
    ),
    Rule(
        code="NX212",
        name="microapp-secret-env-stripped",
        severity="warning",
        summary="an environment variable the microapp needs is one the host strips from it",
        what="Reports `[requires] env` entries and the companion's `http_server.token_env` whose "
        "names end in `_TOKEN`, `_KEY`, `_SECRET`, `_PASSWORD`, `_PASSWD`, `_PWD`, "
        "`_CREDENTIAL(S)`, `_PAT`, `_AUTH`, `_APIKEY`, `_BEARER`, `_SESSION` or contain "
        "`PASSWORD`, `SECRET`, `CREDENTIAL`, `PRIVATE_KEY` (case-insensitive).",
        why="The extension host clears the child's environment and copies back only variables "
        "outside that blocklist. The boot preflight sees the variable set, but the microapp "
        "never does.",
        example='[requires]\nenv = ["WEATHER_API_KEY"]',
        fix="Pass the value another way (a file under the microapp's state directory, or an "
        "admin RPC secret), or use a name outside the blocklist for a value that is no secret.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX213",
        name="microapp-unified-drops",
        severity="warning",
        summary="a section the unified plugin manifest drops when it translates this shape",
        what="Reports `[requires]`, `[context]`, `[mcp_servers]`, `[outbound_bindings]` and "
        "`plugin.priority` in a microapp manifest.",
        why="The daemon source nexo-pkg reads honours them. Newer daemon documentation says the "
        "unified manifest parser translates this shape and drops these sections with a "
        "warning, so on such a daemon they silently stop working.",
        example='[requires]\nbins = ["python3"]',
        fix="Keep them while you target daemons that read the extension shape; check the "
        "unified manifest's replacement before moving to it.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX214",
        name="microapp-companion-id-mismatch",
        severity="error",
        summary="the companion `nexo-plugin.toml` has another `plugin.id` than `plugin.toml`",
        what="Compares `plugin.id` of a microapp's `nexo-plugin.toml` with the `plugin.id` of "
        "the `plugin.toml` beside it.",
        why="The daemon keys the admin capabilities by the companion's id and looks the admin "
        "router up by the `plugin.toml` id: with different ids the microapp silently gets no "
        "admin router and its capability grants match nothing.",
        example='plugin.toml: id = "agent-creator"\nnexo-plugin.toml: id = "agent_creator"',
        fix="Write the same id in both files.",
    ),
    Rule(
        code="NX215",
        name="microapp-unknown-hook",
        severity="warning",
        summary="`[capabilities] hooks` names a hook the host does not register",
        what="Hook names outside `before_message`, `after_message`, `before_tool_call`, "
        "`after_tool_call`.",
        why="The manifest list is informational, but a hook of such a name advertised in the "
        "`initialize` reply is skipped by the host with a warning; it never runs.",
        example='[capabilities]\nhooks = ["on_message"]',
        fix='Use one of the host\'s hook names: `hooks = ["before_message"]`.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX216",
        name="microapp-companion-skipped",
        severity="error",
        summary="the daemon cannot parse the companion `nexo-plugin.toml` and skips it",
        what="A microapp's `nexo-plugin.toml` is read with the plugin manifest's types: "
        "`plugin.version` must be a SemVer version, `plugin.min_nexo_version` a version "
        "requirement, every table closed (`[plugin.capabilities.http_server]` takes `port`, "
        "`bind`, `token_env`, `health_path`), the required keys present.",
        why="When the parse fails the daemon logs a warning and goes on without the file: the "
        "microapp still loads, but without its admin capabilities and its HTTP server, and "
        "nothing else says so.",
        example='[plugin]\nid = "agent-creator"\nversion = "1.0"\nname = "A"\n'
        'description = "A"\nmin_nexo_version = ">=0.1.0"',
        fix='Fix what the message names: `version = "1.0.0"`, `min_nexo_version = ">=0.1.0"`, '
        "no other key in `http_server`.",
    ),
    # --- the daemon's configuration files -----------------------------------------------
    Rule(
        code="NX217",
        name="microapp-id-not-packable",
        severity="warning",
        summary="a `-` in `plugin.id`: valid for the daemon, but the id cannot name a tarball",
        what="Reports a microapp `plugin.id` holding a hyphen.",
        why="The extension parser accepts `^[a-z][a-z0-9_-]*$`, but a release tarball is "
        "`<id>-<version>-<target>.tar.gz`, holds `bin/<id>` and installs into "
        "`<id>-<version>/`, all named by the plugin id rule `^[a-z][a-z0-9_]{0,63}$` (the "
        "reference installer's and `nexo plugin install`'s): a `-` makes the name ambiguous, so "
        "`nexo plugin pack` refuses the project and `nexo plugin new` does not create one.",
        example='[plugin]\nid = "order-tracker"',
        fix='Use `_` instead (`id = "order_tracker"`), in `plugin.toml` and in the companion '
        "`nexo-plugin.toml` alike (their ids must stay equal).",
        beyond_daemon=True,
    ),
    Rule(
        code="NX220",
        name="config-unknown-key",
        severity="error",
        summary="a key `extensions.yaml` (or an agent in `agents.yaml`) does not have",
        what="Every level of `extensions.yaml` is closed: `extensions:` holds `enabled`, "
        "`search_paths`, `disabled`, `allowlist`, `ignore_dirs`, `max_depth`, "
        "`transport_defaults`, `watch`, `doctor`, `follow_links` and `entries`; each "
        "`entries.<id>` holds only `capabilities_grant` and `allow_external_bind`. In "
        "`agents.yaml`, the top holds only `agents` (and `schema_version`, which the loader "
        "drops; not in an `agents.d/` drop-in), and an agent only the keys of the daemon's "
        "agent type (`id`, `model`, `plugins`, `inbound_bindings`, `extensions_config` and "
        "the other documented agent settings): `extensions`, a misspelt key, is refused.",
        why="The daemon's config types deny unknown fields and the loader propagates the "
        "error: one unknown key anywhere stops the daemon from starting. First-party docs "
        "show `enabled`, `path`, `config`, `timeout_secs` under `entries.<id>` and "
        "`agents[].extensions`; none of them exists.",
        example="extensions:\n  entries:\n    weather:\n      enabled: true\n",
        fix="Delete the key (a microapp is enabled by being discovered and not `disabled`); "
        "per-agent settings go to `agents[].extensions_config.<id>`.",
    ),
    Rule(
        code="NX221",
        name="config-wrong-type",
        severity="error",
        summary="a config value has the wrong YAML type or is out of range, or a key is missing",
        what="Checks each value against the daemon's type, as serde_yaml reads it after the "
        "loader substitutes `${VAR}` placeholders: booleans (`true`/`false` only; YAML 1.2, so "
        "`yes`/`on` are strings), unsigned integers (`0x`/`0o`/`0b` too; a leading zero makes "
        "a string), lists of strings, mappings (a null is an empty one), durations with a unit "
        "(`30s`, `1.5s`); and the keys the daemon requires (`extensions:` at the top of "
        "`extensions.yaml`, `agents:` at the top of `agents.yaml` and of each drop-in, `id` "
        "and `model` in each agent).",
        why="serde refuses the file and the daemon does not start.",
        example="extensions:\n  max_depth: -1\n",
        fix="Write the value with the expected type: `max_depth: 3`.",
    ),
    Rule(
        code="NX222",
        name="config-yaml-syntax",
        severity="error",
        summary="the config file is not valid YAML, or defines a key twice",
        what="Parses the file as YAML and reports the parser's first error, and every mapping "
        "key defined twice.",
        why="The daemon's YAML parser refuses the file (duplicate keys included) and the daemon "
        "does not start.",
        example="extensions:\n  enabled: true\n  enabled: false\n",
        fix="Fix the YAML at the position shown; keep one definition of each key.",
    ),
    Rule(
        code="NX223",
        name="config-unset-variable",
        severity="warning",
        summary="a `${VAR}` placeholder names a variable unset here and has no default",
        what="Resolves placeholders as the daemon's loader does (also inside quotes, not in "
        "comments): `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${file:path}`.",
        why="The loader fails on an unset variable without a default, and the daemon does not "
        "start. The daemon's environment may differ from the one lint runs in, hence a "
        "warning.",
        example='extensions:\n  search_paths: ["${EXT_DIR}"]\n',
        fix="Set the variable where the daemon runs, or give a default: "
        "`${EXT_DIR:-./extensions}`.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX224",
        name="config-file-reference",
        severity="error",
        summary="a `${file:...}` placeholder the loader refuses to read",
        what="`${file:path}` may not contain `..`, and an absolute path must be under "
        "`/run/secrets`, `/var/run/secrets`, `./secrets` or `$CONFIG_SECRETS_DIR`.",
        why="The loader refuses the reference and the daemon does not start.",
        example="token: ${file:../secrets/token}\n",
        fix="Keep secrets under one of the allowed roots: `${file:/run/secrets/token}`.",
    ),
    Rule(
        code="NX225",
        name="admin-capability-not-granted",
        severity="error",
        summary="a microapp's required admin capability is not in its `capabilities_grant`",
        what="For every discovered microapp whose `nexo-plugin.toml` declares "
        "`[plugin.capabilities.admin] required`, `extensions.yaml` `entries.<id>."
        "capabilities_grant` must list each of them. With no `extensions.yaml` at all (the "
        "daemon still loads the microapps under `./extensions`), reported on `agents.yaml`.",
        why="The daemon does not refuse to start: its admin bootstrap fails, logs `admin RPC "
        "disabled` and goes on with no admin RPC for any microapp. Without `extensions.yaml` "
        "it builds no admin RPC at all, and the microapp's `app:` requests are dropped.",
        example="extensions:\n  entries:\n    agent-creator:\n      capabilities_grant: []\n",
        fix="Grant what the microapp requires: `capabilities_grant: [agents_crud]` (or remove "
        "the microapp).",
    ),
    Rule(
        code="NX226",
        name="admin-capability-optional-not-granted",
        severity="warning",
        summary="a microapp's optional admin capability is not granted",
        what="Optional capabilities of `[plugin.capabilities.admin] optional` missing from "
        "`capabilities_grant` (or, for a microapp declaring only optional ones, a config "
        "directory with no `extensions.yaml`, reported on `agents.yaml`).",
        why="The daemon starts and warns; calls that need the capability answer `-32004`.",
        example="extensions:\n  entries:\n    agent-creator:\n"
        "      capabilities_grant: [agents_crud]\n",
        fix="Grant it if the microapp should have it, or leave it out on purpose.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX227",
        name="admin-capability-orphan-grant",
        severity="warning",
        summary="`capabilities_grant` lists a capability the microapp does not declare",
        what="Grants that are in neither `required` nor `optional` of the microapp's "
        "`[plugin.capabilities.admin]`, also when the microapp declares no admin capabilities "
        "at all (no such table, or no `nexo-plugin.toml`).",
        why="The daemon warns and grants it anyway (for upgrades); it is most often a typo. A "
        "microapp that declares nothing is skipped at the admin bootstrap without a word: the "
        "grant gives it no admin RPC.",
        example="extensions:\n  entries:\n    agent-creator:\n"
        "      capabilities_grant: [agent_crud]\n",
        fix="Fix the spelling or remove the grant.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX228",
        name="external-bind-not-allowed",
        severity="error",
        summary="`http_server.bind` is not loopback and `allow_external_bind` is not set",
        what="A microapp's `[plugin.capabilities.http_server] bind` other than `127.0.0.1`, "
        "`::1` or `localhost` needs `entries.<id>.allow_external_bind: true`.",
        why="The admin bootstrap fails (`ExternalBindNotAllowed`): the daemon starts with no "
        "admin RPC for any microapp.",
        example="extensions:\n  entries:\n    dashboard: {}\n",
        fix="Bind to `127.0.0.1`, or opt in: `allow_external_bind: true`.",
    ),
    Rule(
        code="NX229",
        name="config-names-no-microapp",
        severity="warning",
        summary="a config entry names no microapp the daemon discovers",
        what="Ids in `entries`, `disabled`, `allowlist` and agents' `extensions_config` are "
        "compared with the microapps found under `search_paths` (as the daemon walks them); "
        "`allowlist` ids with those left after `disabled`, as the daemon compares them.",
        why="The daemon ignores such entries silently: a misspelt id leaves the intended "
        "microapp without its grants or settings.",
        example="extensions:\n  entries:\n    wheather: {capabilities_grant: [agents_crud]}\n",
        fix="Use the microapp's `plugin.id`, or remove the entry.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX230",
        name="extensions-config-not-delivered",
        severity="warning",
        summary="`agents[].extensions_config` is parsed but never sent to the microapp",
        what="Reports every `extensions_config` of an agent in `agents.yaml`.",
        why="The daemon accepts the key but no code passes it on: the `initialize` request "
        "carries only `agent_version` and `extension_id`.",
        example="agents:\n  - id: ana\n    model: {provider: minimax, model: m}\n"
        "    extensions_config:\n      weather: {region: bogota}\n",
        fix="Give the microapp its settings through its own configuration file or "
        "environment until the daemon delivers them.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX231",
        name="config-unterminated-placeholder",
        severity="error",
        summary="a `${` outside a comment never closes: the daemon hangs loading the file",
        what="Scans for placeholders as the daemon's loader does (also inside quotes, not in "
        "comments) and reports the first `${` whose braces never balance.",
        why="The loader's scan stays at that `${` forever (`crates/config/src/env.rs`, "
        "`find_placeholders`): the daemon never finishes reading its configuration and never "
        "starts, with no error to say why.",
        example='extensions:\n  search_paths: ["${EXT_DIR"]\n',
        fix="Close the placeholder: `${EXT_DIR}`.",
    ),
    Rule(
        code="NX232",
        name="config-key-overridden",
        severity="warning",
        summary="a microapp id written twice in a drop-in's `extensions_config`: the last wins",
        what="In an `agents.d/` drop-in, an id defined twice in an agent's `extensions_config`.",
        why="The daemon reads a drop-in straight into its types, where `extensions_config` is a "
        "map: the second definition silently replaces the first (in `agents.yaml`, read "
        "through a YAML value first, the same is an error).",
        example="agents:\n  - id: ana\n    model: {provider: minimax, model: m}\n"
        "    extensions_config:\n      weather: {region: a}\n"
        "      weather: {region: b}\n",
        fix="Keep one definition of each id.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX233",
        name="config-placeholder-in-default",
        severity="warning",
        summary="a `${VAR:-...}` default holds another placeholder, which is never resolved",
        what="Placeholders whose default (after `:-` or `-`) contains `${`.",
        why="The daemon's loader resolves one level only (`crates/config/src/env.rs` "
        "`resolve_one`): when the variable is unset, the value is the default's text as "
        "written, `${OTHER}` included, not the value of `OTHER` as a shell would give.",
        example='extensions:\n  search_paths: ["${EXT_DIR:-${HOME_DIR}}"]\n',
        fix="Give a plain default (`${EXT_DIR:-./extensions}`), or set the variable where the "
        "daemon runs.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX234",
        name="walker-reaches-kept-versions",
        severity="warning",
        summary="`max_depth` lets the daemon's walker reach the versions `upgrade` keeps",
        what="For each search path, the plugin roots nexo-pkg keeps its bookkeeping in "
        "(a `.nexo` directory) that the discovery walk meets so high up that, with "
        "`max_depth` and `ignore_dirs` as set, it also reaches `.nexo/kept/<name>/tree/"
        "plugin.toml` (the old versions kept for `nexo plugin rollback`, four levels below "
        "the root; staging and removing trees are as deep).",
        why="The extension host's walker skips only the directory names of `ignore_dirs` "
        "(hidden ones are walked) down to `max_depth` (`crates/extensions/src/discovery.rs:"
        "188-202`). A kept microapp is then discovered beside the installed one, and of two "
        "with one id the daemon keeps the first by path (`discovery.rs:312-328`): `.nexo` "
        "sorts before every id, so it loads the version kept for rollback, not the one "
        "installed.",
        example="extensions:\n  search_paths: [/var/lib/nexo/plugins]\n  max_depth: 5\n",
        fix="Keep `max_depth` below the depth shown, or add `.nexo` to `ignore_dirs` (with the "
        "defaults it replaces: `[target, .git, node_modules, dist, .build, .nexo]`).",
        beyond_daemon=True,
    ),
    Rule(
        code="NX235",
        name="drop-in-not-loaded",
        severity="warning",
        summary="an `agents.d/` file not named `*.yaml`, which the daemon never reads",
        what="A file in an `agents.d/` directory, linted as an agents drop-in, whose name does "
        "not end in `.yaml` (`bob.yml`, or a name that is only `.yaml`).",
        why="The daemon's loader reads only the entries of `agents.d/` whose extension is "
        "exactly `yaml` (`crates/config/src/lib.rs` `merge_agents_drop_in`) and skips every "
        "other file without a word: the agents this file defines are never loaded.",
        example="# agents.d/bob.yml\nagents:\n  - id: bob\n    model: {provider: minimax, "
        "model: m}\n",
        fix="Rename the file to end in `.yaml` (`agents.d/bob.yaml`).",
        beyond_daemon=True,
    ),
)

MICROAPP_RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
