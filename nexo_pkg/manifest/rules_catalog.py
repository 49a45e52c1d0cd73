"""Documentation of every semantic rule (codes ``NX100`` and up), shown by ``--explain``.

Codes are stable once released and never reused. Rules whose verdict goes beyond the
reference daemon's own validation carry ``beyond_daemon=True`` (``--explain`` adds the generic
note) and their ``why`` says what exactly the daemon lets through.
"""

from __future__ import annotations

from nexo_pkg.core.diagnostics import Rule

__all__ = ["SEMANTIC_RULES"]

_RULES: tuple[Rule, ...] = (
    # --- identity -------------------------------------------------------------------------
    Rule(
        code="NX100",
        name="invalid-plugin-id",
        severity="error",
        summary="`plugin.id` is not a lowercase slug of at most 64 characters",
        what="`plugin.id` must match `^[a-z][a-z0-9_]{0,63}$`, the daemon's id rule: a lowercase "
        "ASCII letter, then up to 63 lowercase letters, digits or underscores. The message names "
        "the precise reason (empty, starts with a digit, uppercase, too long, bad character). "
        "Ids of 33 to 64 characters are valid but draw NX109.",
        why="The id names the plugin's directory, its tool namespace and its broker subjects; "
        "the daemon refuses any other shape (`IdInvalid`).",
        example='[plugin]\nid = "Weather-Plugin"',
        fix='Use lowercase letters, digits and underscores: `id = "weather_plugin"`.',
    ),
    Rule(
        code="NX101",
        name="invalid-plugin-version",
        severity="error",
        summary="`plugin.version` is not a SemVer 2.0 version",
        what="`plugin.version` must be `MAJOR.MINOR.PATCH[-pre][+build]` with no `v` prefix, no "
        "leading zeros and no surrounding whitespace.",
        why="The daemon parses it with Rust's `semver::Version` and refuses the manifest "
        "otherwise; release tags and tarball names are derived from it.",
        example='[plugin]\nversion = "v1.02"',
        fix='Write a full SemVer version: `version = "1.2.0"`.',
    ),
    Rule(
        code="NX102",
        name="blank-plugin-name",
        severity="error",
        summary="`plugin.name` is empty or only whitespace",
        what="`plugin.name` must contain at least one non-whitespace character.",
        why="The daemon refuses a blank name (`NameEmpty`); operators see it in listings.",
        example='[plugin]\nname = "  "',
        fix='Give the plugin a human-readable name: `name = "Weather"`.',
    ),
    Rule(
        code="NX103",
        name="blank-plugin-description",
        severity="error",
        summary="`plugin.description` is empty or only whitespace",
        what="`plugin.description` must contain at least one non-whitespace character.",
        why="The daemon refuses a blank description (`DescriptionEmpty`).",
        example='[plugin]\ndescription = ""',
        fix='Describe what the plugin does: `description = "Current weather by city"`.',
    ),
    Rule(
        code="NX104",
        name="invalid-min-nexo-version",
        severity="error",
        summary="`plugin.min_nexo_version` is not a Cargo version requirement",
        what="`min_nexo_version` must parse as Rust's `semver::VersionReq`: comma-separated "
        "comparators (`=`, `>`, `>=`, `<`, `<=`, `~`, `^`, or none meaning `^`) on 1-3 part "
        "versions, `*`/`x`/`X` wildcards, or `*` alone.",
        why="The daemon refuses to load a manifest whose requirement does not parse.",
        example='[plugin]\nmin_nexo_version = ">= v0.1"',
        fix='Write a requirement such as `">=0.1.0"`, `"^0.2"`, `"0.3.*"` or `">=0.1, <0.5"`.',
    ),
    Rule(
        code="NX105",
        name="min-nexo-version-mismatch",
        severity="error",
        summary="`min_nexo_version` does not match the daemon version given by --nexo-version",
        what="With `--nexo-version X.Y.Z`, the requirement must match that version, with its "
        "pre-release tag removed first (a `0.1.6-rc3` daemon counts as `0.1.6`), using Cargo's "
        "matching rules.",
        why="The daemon refuses to load a plugin whose requirement excludes it "
        "(`MinNexoVersionMismatch`). Without `--nexo-version` nothing is compared here; NX123 "
        "warns when no daemon release nexo-pkg knows satisfies the requirement.",
        example='[plugin]\nmin_nexo_version = ">=0.5"   # linted with --nexo-version 0.4.2',
        fix="Relax the requirement, or upgrade the daemon you target.",
    ),
    # --- entrypoint -----------------------------------------------------------------------
    Rule(
        code="NX106",
        name="reserved-entrypoint-env",
        severity="error",
        summary="`[plugin.entrypoint] env` sets a reserved `NEXO_` variable",
        what="Keys of table `[plugin.entrypoint.env]` must not begin with `NEXO_`. Checked only "
        "when `[plugin.entrypoint] command` names a program: without one the daemon never "
        "spawns the plugin and never looks at its environment.",
        why="The daemon sets the `NEXO_*` variables itself and its spawn helper refuses a "
        "plugin that tries to override them.",
        example='[plugin.entrypoint.env]\nNEXO_HOME = "/tmp"',
        fix="Rename the variable without the `NEXO_` prefix (for example `WEATHER_HOME`), in "
        "the manifest and in the plugin's code that reads it. `nexo plugin lint --fix "
        "--unsafe-fixes` renames it in the manifest only: an unsafe fix.",
    ),
    Rule(
        code="NX107",
        name="empty-entrypoint-command",
        severity="error",
        summary="`[plugin.entrypoint] command` is empty",
        what="When key `command` is given it must name a program.",
        why="The daemon's manifest validation lets a blank command through, but the plugin "
        "never runs: discovery takes a blank command for no entrypoint at all (an in-tree "
        "plugin, which has no code in the daemon), and the subprocess spawn code refuses it "
        "outright (`manifest entrypoint.command is empty`). A blank command is always a "
        "mistake, so it stays an error.",
        example='[plugin.entrypoint]\ncommand = ""',
        fix='Name the program (`command = "./bin/weather"`) or remove the key.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX108",
        name="invalid-entrypoint-command",
        severity="warning",
        summary="`[plugin.entrypoint] command` is not absolute, a bare name or `./`-relative",
        what="`command` must be an absolute path, a bare program name resolved on PATH "
        "(`python3`), or a `./`-relative path that stays inside the plugin root after "
        "normalisation. `bin/x`, `../x` and `./../x` are reported, a path separated by `\\` "
        "(`./bin\\x`), and a command line such as `python3 main.py` in `command`.",
        why="The daemon does not check the command's shape, but a path such as `bin/x` is "
        "resolved against whatever directory the daemon runs in, and `..` reaches outside the "
        "installed plugin. On the Linux and macOS hosts the daemon runs on, `\\` is part of a "
        "file name, not a separator. The daemon spawns `command` as one program name, without a "
        "shell: "
        "`python3 main.py` names a program that does not exist; arguments go in `args`.",
        example='[plugin.entrypoint]\ncommand = "bin/weather"',
        fix='Write `command = "./bin/weather"` (inside the plugin root) or an absolute path.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX109",
        name="long-id",
        severity="warning",
        summary="an id is longer than the 32 characters older daemons and contract 1.10 allow",
        what="`plugin.id`, the ids of `[plugin.extends]` (tool names included) may have up to 64 "
        "characters in the newest daemon. One of 33 to 64 characters is reported here.",
        why="The daemon raised its id limit from 32 to 64 characters; the plugin contract 1.10.0 "
        "and daemons before the change still refuse longer ids, so such a plugin loads only in "
        "new daemons.",
        example='[plugin.extends]\ntools = ["marketing_lead_detect_meeting_intent"]',
        fix="Shorten the id to at most 32 characters if the plugin must load in older daemons; "
        "otherwise ignore the rule (`--ignore NX109`).",
        beyond_daemon=True,
    ),
    # --- extends and tools ----------------------------------------------------------------
    Rule(
        code="NX110",
        name="invalid-extends-id",
        severity="error",
        summary="an id in `[plugin.extends]` is not a lowercase slug",
        what="Every entry of the arrays `channels`, `llm_providers`, `memory_backends`, `hooks` "
        "and `tools` of `[plugin.extends]` must match `^[a-z][a-z0-9_]{0,63}$`.",
        why="The daemon registers these ids in shared registries (`ExtendsIdInvalid`).",
        example='[plugin.extends]\nhooks = ["Before-Send"]',
        fix='Use a lowercase slug: `hooks = ["before_send"]`.',
    ),
    Rule(
        code="NX111",
        name="duplicate-extends-id",
        severity="error",
        summary="an id is repeated within one `[plugin.extends]` array",
        what="Each array of `[plugin.extends]` lists an id at most once; every repeat is reported.",
        why="The daemon refuses duplicates (`ExtendsDuplicate`).",
        example='[plugin.extends]\nchannels = ["sms", "sms"]',
        fix="Remove the repeated entry.",
    ),
    Rule(
        code="NX112",
        name="extends-cross-list-conflict",
        severity="error",
        summary="an id appears in more than one `[plugin.extends]` array",
        what="An id may occupy at most one of the five arrays of `[plugin.extends]`.",
        why="The daemon refuses the ambiguity (`ExtendsCrossListConflict`).",
        example='[plugin.extends]\nchannels = ["sms"]\nhooks = ["sms"]',
        fix="Rename one of the two ids, or keep it in a single array.",
    ),
    Rule(
        code="NX113",
        name="tool-namespace-violation",
        severity="error",
        summary="a tool name does not start with `<plugin id>_` or `ext_<plugin id>_`",
        what="Every name in arrays `plugin.extends.tools` and `plugin.tools.expose` must start "
        "with the plugin id followed by `_`, or with `ext_<id>_`. Not checked while `plugin.id` "
        "itself is invalid (NX100 comes first).",
        why="Tool names are global to the agent; the namespace prevents two plugins from "
        "shadowing each other's tools (`ToolNamespaceViolation`).",
        example='[plugin]\nid = "weather"\n[plugin.extends]\ntools = ["get_forecast"]',
        fix='Prefix the name with the plugin id: `tools = ["weather_get_forecast"]`, in the '
        "manifest and in the plugin's code that answers to it. `nexo plugin lint --fix "
        "--unsafe-fixes` renames it in the manifest only: an unsafe fix.",
    ),
    Rule(
        code="NX114",
        name="deferred-tool-not-exposed",
        severity="error",
        summary="a `tools.deferred` entry is missing from `tools.expose`",
        what="Every name in array `plugin.tools.deferred` must also be in `plugin.tools.expose`.",
        why="Deferred tools are exposed tools whose schema is loaded lazily; the daemon refuses "
        "a deferred tool that is not exposed (`DeferredNotInExpose`).",
        example='[plugin.tools]\nexpose = ["weather_now"]\ndeferred = ["weather_history"]',
        fix="Add the tool to `expose`, or remove it from `deferred`.",
    ),
    Rule(
        code="NX115",
        name="outbound-tool-not-exposed",
        severity="error",
        summary="a `[[plugin.tools.outbound]]` name is missing from `tools.expose`",
        what="Key `name` of every `[[plugin.tools.outbound]]` table must appear in array "
        "`plugin.tools.expose`.",
        why="The namespace and deferred checks only see exposed names (`OutboundNotExposed`).",
        example='[plugin.tools]\nexpose = []\n[[plugin.tools.outbound]]\nname = "weather_now"',
        fix="Add the name to `plugin.tools.expose`.",
    ),
    Rule(
        code="NX116",
        name="invalid-outbound-input-schema",
        severity="error",
        summary="`input_schema` of an outbound tool is not a JSON object schema",
        what="Key `input_schema` of `[[plugin.tools.outbound]]` is JSON text that must be "
        "non-blank, valid JSON, a JSON object, whose root `type` is the string `object`.",
        why="The daemon refuses the manifest otherwise (`OutboundInvalidSchema`); models "
        "receive this schema as the tool's parameters.",
        example='input_schema = \'{"type": "string"}\'',
        fix='Write an object schema: `input_schema = \'{"type": "object", "properties": {}}\'`.',
    ),
    Rule(
        code="NX117",
        name="invalid-config-schema",
        severity="error",
        summary="`[plugin.config_schema] schema` is not a JSON object schema",
        what="Key `schema` of `[plugin.config_schema]` is JSON text that must be non-blank, "
        "valid JSON, a JSON object, whose root `type` is `object` (also for `shape = "
        '"array"`, where it describes one element).',
        why="The daemon refuses the manifest otherwise (`PluginConfigInvalidSchema`).",
        example="[plugin.config_schema]\nschema = '[]'\nshape = \"object\"",
        fix='Write an object schema: `schema = \'{"type": "object"}\'`.',
    ),
    Rule(
        code="NX118",
        name="capability-without-implementation",
        severity="error",
        summary="a capability in `capabilities.provides` has no matching section",
        what="`tools` needs a non-empty `tools.expose`, `advisors` a non-empty "
        "`advisors.register`, `agents` an `agents.contributes_dir`, `skills` a "
        "`skills.contributes_dir`, `channels` a non-empty `[[plugin.channels.register]]`.",
        why="The daemon refuses a capability that nothing implements (`CapabilityWithoutImpl`).",
        example='[plugin.capabilities]\nprovides = ["tools"]',
        fix="Fill in the matching section, or remove the capability from `provides`.",
    ),
    Rule(
        code="NX119",
        name="duplicate-gate-env-var",
        severity="error",
        summary="two `[[plugin.capability_gates.gate]]` tables use the same `env_var`",
        what="Key `env_var` must be unique across `[[plugin.capability_gates.gate]]` tables; "
        "every repeat is reported.",
        why="One environment variable cannot gate two capabilities (`DuplicateGateEnvVar`).",
        example='[[plugin.capability_gates.gate]]\nenv_var = "WEATHER_ALLOW"\n'
        '[[plugin.capability_gates.gate]]\nenv_var = "WEATHER_ALLOW"',
        fix="Give each gate its own variable.",
    ),
    Rule(
        code="NX120",
        name="invalid-channel-kind",
        severity="error",
        summary="a `[[plugin.channels.register]] kind` is not a lowercase slug",
        what="Key `kind` must match `^[a-z][a-z0-9_]{0,31}$`.",
        why="Channel kinds become broker subjects and registry keys (`ChannelKindInvalid`).",
        example='[[plugin.channels.register]]\nkind = "SMS-Gateway"\nadapter = "sms"',
        fix='Use a lowercase slug: `kind = "sms_gateway"`.',
    ),
    Rule(
        code="NX121",
        name="absolute-path-forbidden",
        severity="error",
        summary="a plugin-relative path field is absolute",
        what="`agents.contributes_dir`, `skills.contributes_dir` and `config.schema_path` are "
        "resolved against the plugin root and must not start with `/` or contain `:\\`.",
        why="An absolute path points outside the installed plugin (`PathAbsoluteForbidden`).",
        example='[plugin.skills]\ncontributes_dir = "/opt/skills"',
        fix='Use a path relative to the plugin root: `contributes_dir = "skills"`.',
    ),
    Rule(
        code="NX122",
        name="path-traversal",
        severity="error",
        summary="a plugin-relative path field contains a `..` segment",
        what="`agents.contributes_dir`, `skills.contributes_dir` and `config.schema_path` must "
        "not contain a `..` segment (split on `/` and `\\`).",
        why="`..` escapes the plugin root (`PathTraversal`).",
        example='[plugin.config]\nschema_path = "../shared/schema.json"',
        fix="Move the file inside the plugin and point at it without `..`.",
    ),
    # --- supervisor -----------------------------------------------------------------------
    Rule(
        code="NX130",
        name="supervisor-stderr-tail-too-large",
        severity="error",
        summary="`supervisor.stderr_tail_lines` exceeds 512",
        what="Key `stderr_tail_lines` of `[plugin.supervisor]` must be at most 512.",
        why="The daemon keeps that many stderr lines in memory per plugin "
        "(`SupervisorStderrTailExceedsCap`).",
        example="[plugin.supervisor]\nstderr_tail_lines = 10000",
        fix="Lower the value to 512 or less.",
    ),
    Rule(
        code="NX131",
        name="supervisor-max-attempts-zero",
        severity="error",
        summary="`supervisor.max_attempts` is 0 while `respawn = true`",
        what="With `respawn = true`, key `max_attempts` must be at least 1.",
        why="Zero attempts contradicts respawning (`SupervisorMaxAttemptsZero`).",
        example="[plugin.supervisor]\nrespawn = true\nmax_attempts = 0",
        fix="Set `max_attempts = 1` or more, or `respawn = false`.",
    ),
    Rule(
        code="NX132",
        name="supervisor-backoff-too-small",
        severity="error",
        summary="`supervisor.backoff_ms` is below 100 while `respawn = true`",
        what="With `respawn = true`, key `backoff_ms` must be at least 100.",
        why="A smaller base makes a tight retry loop (`SupervisorBackoffMsBelowFloor`).",
        example="[plugin.supervisor]\nrespawn = true\nbackoff_ms = 10",
        fix="Set `backoff_ms` between 100 and 300000.",
    ),
    Rule(
        code="NX133",
        name="supervisor-backoff-too-large",
        severity="error",
        summary="`supervisor.backoff_ms` exceeds 300000 while `respawn = true`",
        what="With `respawn = true`, key `backoff_ms` must be at most 300000 (5 minutes).",
        why="A larger base disables the per-window recovery (`SupervisorBackoffMsExceedsCap`).",
        example="[plugin.supervisor]\nrespawn = true\nbackoff_ms = 600000",
        fix="Set `backoff_ms` between 100 and 300000.",
    ),
    # --- sandbox --------------------------------------------------------------------------
    Rule(
        code="NX140",
        name="sandbox-settings-ignored",
        severity="warning",
        summary="`[plugin.sandbox]` is filled in but not enabled",
        what="When `enabled` is false or absent, `network`, `fs_read_paths` and "
        "`fs_write_paths` are ignored and nothing is checked.",
        why="The daemon skips a disabled section, but an author who writes an allowlist usually "
        "expects it to apply; without `enabled = true` the plugin runs unsandboxed.",
        example='[plugin.sandbox]\nfs_read_paths = ["/etc/ssl/certs"]',
        fix="Add `enabled = true`, or remove the unused keys.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX141",
        name="sandbox-host-network-not-allowed",
        severity="error",
        summary='`network = "host"` without the operator\'s host-network permission',
        what='With the sandbox enabled, `network = "host"` validates only when '
        "`NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW` is on (`1`, `true`, `TRUE`, `yes` or `YES`, as "
        "the daemon reads it).",
        why="Host networking removes the network isolation; the daemon refuses it unless the "
        "operator opted in (`SandboxHostNetworkWithoutCapability`).",
        example='[plugin.sandbox]\nenabled = true\nnetwork = "host"',
        fix='Use `network = "deny"`, or lint with NEXO_PLUGIN_SANDBOX_HOST_NET_ALLOW=1 if the '
        "target daemon allows it.",
    ),
    Rule(
        code="NX142",
        name="sandbox-state-dir-in-read-path",
        severity="error",
        summary="`${state_dir}` used in `fs_read_paths`",
        what="The `${state_dir}` token is only expanded in `fs_write_paths`.",
        why="The daemon refuses it in read paths (`SandboxInvalidStateDirInterpolation`); the "
        "state directory is already readable when it is writable.",
        example='[plugin.sandbox]\nenabled = true\nfs_read_paths = ["${state_dir}/cache"]',
        fix="Move the entry to `fs_write_paths`.",
    ),
    Rule(
        code="NX143",
        name="sandbox-state-dir-not-leading",
        severity="warning",
        summary="`${state_dir}` is not the leading token of a write path",
        what="In `fs_write_paths`, `${state_dir}` may appear once, as the whole entry or "
        "followed by `/`.",
        why="The daemon substitutes the token anywhere, but `/tmp/${state_dir}` or "
        "`${state_dir}x` name a directory that is not the state directory.",
        example='[plugin.sandbox]\nenabled = true\nfs_write_paths = ["/tmp/${state_dir}"]',
        fix='Write `"${state_dir}"` or `"${state_dir}/sub/dir"`.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX144",
        name="sandbox-relative-path",
        severity="error",
        summary="a sandbox path is not absolute after `${state_dir}` expansion",
        what="Every entry of `fs_read_paths` and `fs_write_paths` must start with `/` once "
        "`${state_dir}` is expanded; `~` and environment variables are not expanded.",
        why="The daemon refuses relative entries (`SandboxRelativePath`).",
        example='[plugin.sandbox]\nenabled = true\nfs_read_paths = ["data"]',
        fix="Write an absolute path, or `${state_dir}/data` for plugin state.",
    ),
    Rule(
        code="NX145",
        name="sandbox-path-denylisted",
        severity="error",
        summary="a sandbox path equals, lies under or contains a denylisted host path",
        what="No allowlist entry may equal, lie under, or contain one of the 16 denylisted host "
        "paths (`/etc/shadow`, `/etc/sudoers`, `/etc/sudoers.d`, `/proc/sys`, `/proc/kcore`, "
        "`/proc/kallsyms`, `/sys/firmware`, `/sys/kernel`, `/dev/mem`, `/dev/kmem`, "
        "`/dev/port`, `/var/run/docker.sock`, `/run/docker.sock`, "
        "`/private/var/run/docker.sock`, `/root`, `/boot`); `/` and `/etc` are therefore "
        "refused, `/etc/ssl/certs` is fine.",
        why="These paths leak credentials or give control of the host "
        "(`SandboxAllowlistTouchesDenylist`).",
        example='[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/etc"]',
        fix="Narrow the entry to a sibling that does not include the denylisted path "
        "(for example `/etc/ssl/certs`).",
    ),
    Rule(
        code="NX146",
        name="sandbox-path-denylisted-normalised",
        severity="error",
        summary="a sandbox path reaches a denylisted host path once normalised",
        what="The entry passes the daemon's lexical comparison but, after removing repeated "
        "slashes, `.` segments and trailing slashes and resolving `..`, equals, lies under or "
        "contains a denylisted host path (`//etc/shadow`, `/etc/`, `/tmp/../etc/shadow`).",
        why="The daemon compares the strings literally, but the kernel resolves these "
        "spellings to the denylisted file.",
        example='[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/etc/"]',
        fix="Write the path in normal form and narrow it to a sibling of the denylisted path.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX147",
        name="sandbox-home-secret",
        severity="error",
        summary="a sandbox path exposes a credential directory in a home",
        what="No entry may equal, lie under or contain a home secret (`.aws`, `.ssh`, `.gnupg`, "
        "`.netrc`, `.docker`, `.kube`, `.cargo/credentials`, `.cargo/credentials.toml`, "
        "`.npmrc`, `.config/gh`, `.config/git`) of any home: `/home/<user>`, `/Users/<user>`, "
        "`/root` or `~`. A whole home (`/home/ana`) or `/home` contains them too.",
        why="The daemon exports this list but does not check it; a plugin that can read "
        "`~/.ssh` can exfiltrate keys.",
        example='[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/home/ana"]',
        fix="Allow only the specific directories the plugin needs (`/home/ana/Documents/x`).",
        beyond_daemon=True,
    ),
    Rule(
        code="NX148",
        name="sandbox-path-missing",
        severity="warning",
        summary="a sandbox path does not exist on the host running the lint",
        what="With the sandbox enabled, every `fs_read_paths` and `fs_write_paths` entry "
        "without `${state_dir}` is looked up on the machine running `nexo plugin lint`; an "
        "entry that does not exist there is reported. Entries with `${state_dir}` depend on "
        "the daemon's state directory and are not looked up.",
        why="The daemon accepts the manifest, but on Linux it spawns the plugin as "
        "`bwrap … --ro-bind P P` (`--bind P P` for write paths) for every entry, and bwrap "
        "refuses a source that does not exist (`bwrap: Can't find source path P`): the plugin "
        "then cannot start at all on that host. Listing alternatives (several browser binaries, "
        "of which each host has one) therefore makes the plugin unstartable everywhere. The "
        "verdict depends on the host linting: lint where the daemon runs. On macOS the daemon "
        "runs plugins unsandboxed, so a missing path does not stop it there.",
        example='[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/usr/bin/chromium", '
        '"/usr/bin/google-chrome"]',
        fix="Drop entries under `/usr`, `/bin`, `/sbin`, `/lib`, `/lib64` and `/etc/ssl`: the "
        "daemon binds those directories read-only in every sandbox (browser binaries in "
        "`/usr/bin` need no entry). List only paths every target host has; create a write "
        "path before the daemon starts the plugin, or keep writable state under "
        "`${state_dir}`.",
        beyond_daemon=True,
    ),
    # --- pairing and public tunnel --------------------------------------------------------
    Rule(
        code="NX149",
        name="sandbox-required",
        severity="error",
        summary="An unsandboxed plugin where the daemon requires a sandbox",
        what="When `NEXO_PLUGIN_SANDBOX_REQUIRE` is on in the environment lint runs in (`1`, "
        "`true`, `TRUE`, `yes` or `YES`, as the daemon reads it), a plugin with an entrypoint "
        "command must have `[plugin.sandbox] enabled = true`.",
        why="The daemon's sandbox runner refuses to spawn such a plugin "
        "(`SandboxRequiredButDisabled`), so it never runs there.",
        example='[plugin.entrypoint]\ncommand = "./bin/weather"   # NEXO_PLUGIN_SANDBOX_REQUIRE=1',
        fix="Add `[plugin.sandbox]` with `enabled = true` and the paths the plugin needs.",
    ),
    Rule(
        code="NX150",
        name="pairing-form-without-fields",
        severity="error",
        summary='`[plugin.pairing] kind = "form"` without `[[plugin.pairing.fields]]`',
        what="A form pairing needs at least one `[[plugin.pairing.fields]]` table.",
        why="An empty form renders nothing (`PairingFormWithoutFields`).",
        example='[plugin.pairing]\nkind = "form"',
        fix="Add `[[plugin.pairing.fields]]` tables with `name` and `label`.",
    ),
    Rule(
        code="NX151",
        name="pairing-custom-without-rpc-namespace",
        severity="error",
        summary='`[plugin.pairing] kind = "custom"` without `rpc_namespace`',
        what="A custom pairing needs a non-empty key `rpc_namespace`.",
        why="The admin listens on `nexo/notify/<rpc_namespace>/status_changed` "
        "(`PairingCustomWithoutRpcNamespace`).",
        example='[plugin.pairing]\nkind = "custom"',
        fix='Add `rpc_namespace = "weather"`.',
    ),
    Rule(
        code="NX152",
        name="pairing-fields-without-form-kind",
        severity="error",
        summary="`[[plugin.pairing.fields]]` with a kind that takes no fields",
        what='Pairing fields are only valid with `kind = "form"` or `kind = "qr"`; `custom` '
        "and `info` take none.",
        why="The daemon refuses them (`PairingFieldsWithoutFormKind`).",
        example='[plugin.pairing]\nkind = "info"\n[[plugin.pairing.fields]]\nname = "token"',
        fix='Remove the fields, or use `kind = "form"`.',
    ),
    Rule(
        code="NX153",
        name="pairing-trigger-empty-method",
        severity="error",
        summary="`[plugin.pairing.trigger]` has a blank `start_method` or `cancel_method`",
        what="With `kind` set, `start_method` and `cancel_method` of `[plugin.pairing.trigger]` "
        "must be non-blank.",
        why="The daemon forwards to these admin methods (`PairingTriggerEmptyMethod`).",
        example='[plugin.pairing.trigger]\nstart_method = ""\ncancel_method = "x"',
        fix="Name the admin methods that start and cancel pairing.",
    ),
    Rule(
        code="NX154",
        name="pairing-trigger-only-with-qr",
        severity="error",
        summary='`[plugin.pairing.trigger]` with a kind other than "qr"',
        what='A pairing trigger is only valid with `kind = "qr"`.',
        why="Form and info pairings have no remote pump to start or cancel "
        "(`PairingTriggerOnlyWithQr`).",
        example='[plugin.pairing]\nkind = "form"\n[plugin.pairing.trigger]\nstart_method = "a"',
        fix='Remove the trigger, or use `kind = "qr"`.',
    ),
    Rule(
        code="NX155",
        name="public-tunnel-close-event-empty",
        severity="error",
        summary="`[plugin.public_tunnel] close_on_event` is blank",
        what="When given, `close_on_event` must be a non-blank broker subject.",
        why="The daemon subscribes to it (`PublicTunnelCloseEventEmpty`).",
        example='[plugin.public_tunnel]\nclose_on_event = " "',
        fix='Name a subject, e.g. `close_on_event = "weather.paired"`, or remove the key.',
    ),
    Rule(
        code="NX156",
        name="public-tunnel-close-event-wildcard",
        severity="error",
        summary="`[plugin.public_tunnel] close_on_event` contains a wildcard segment",
        what="No `.`-separated segment of `close_on_event` may be `*` or `>`.",
        why="Only literal subjects are accepted (`PublicTunnelCloseEventWildcard`).",
        example='[plugin.public_tunnel]\nclose_on_event = "weather.*"',
        fix="Name the exact subject that closes the tunnel.",
    ),
    # --- admin UI -------------------------------------------------------------------------
    Rule(
        code="NX160",
        name="admin-ui-unsupported-schema-version",
        severity="error",
        summary="`[plugin.admin_ui] schema_version` is not 1",
        what="Only `schema_version = 1` is supported.",
        why="The daemon refuses other versions (`AdminUiInvalid`).",
        example="[plugin.admin_ui]\nschema_version = 2",
        fix="Set `schema_version = 1` or remove the key.",
    ),
    Rule(
        code="NX161",
        name="admin-ui-embedded-mode",
        severity="error",
        summary='`[plugin.admin_ui] mode = "embedded"` is not supported yet',
        what='`mode = "embedded"` parses but is always refused.',
        why="Embedded admin UIs are deferred to a later admin UI version (`AdminUiInvalid`).",
        example='[plugin.admin_ui]\nmode = "embedded"',
        fix='Use `mode = "declarative"` (the default).',
    ),
    Rule(
        code="NX162",
        name="admin-ui-invalid-id",
        severity="error",
        summary="an admin UI screen, action or contribution id is not kebab-case",
        what="Ids of screens, actions and contributions must match `^[a-z][a-z0-9-]{0,40}$`.",
        why="Ids appear in admin URLs and references (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.screens]]\nid = "Main_Screen"',
        fix='Use kebab-case: `id = "main-screen"`.',
    ),
    Rule(
        code="NX163",
        name="admin-ui-duplicate-id",
        severity="error",
        summary="an admin UI id or field key is repeated",
        what="Screen ids and contribution ids are unique in `[plugin.admin_ui]`; action ids and "
        "field keys are unique within their screen.",
        why="References by id would be ambiguous (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.screens]]\nid = "main"\n[[plugin.admin_ui.screens]]\n'
        'id = "main"',
        fix="Rename one of them.",
    ),
    Rule(
        code="NX164",
        name="admin-ui-empty-label",
        severity="error",
        summary="an admin UI title or label is empty",
        what="Screen titles and the labels of fields, actions and contributions must be "
        "non-blank (as a string, or as a locale table with at least one non-blank value).",
        why="The admin would render an empty element (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.screens]]\nid = "main"\ntitle = ""',
        fix='Write a label: `title = "Weather"` or `title = { en = "Weather" }`.',
    ),
    Rule(
        code="NX165",
        name="admin-ui-method-outside-admin-namespace",
        severity="error",
        summary="an admin UI method does not start with `nexo/admin/`",
        what="`load`, `refresh.method`, action `method` and `options_source.method` must start "
        "with `nexo/admin/`.",
        why="The admin only forwards methods of the admin namespace (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.screens]]\nid = "main"\nload = "weather/load"',
        fix='Use `load = "nexo/admin/weather/load"`.',
    ),
    Rule(
        code="NX166",
        name="admin-ui-screen-without-fields",
        severity="error",
        summary="an admin UI screen has no fields while `describe = false`",
        what="Unless `[plugin.admin_ui] describe = true`, every screen needs at least one field.",
        why="Without fields and without describe the screen would be empty (`AdminUiInvalid`).",
        example='[plugin.admin_ui]\n[[plugin.admin_ui.screens]]\nid = "main"\ntitle = "Main"',
        fix="Add `[[plugin.admin_ui.screens.fields]]`, or set `describe = true`.",
    ),
    Rule(
        code="NX167",
        name="admin-ui-invalid-field-key",
        severity="error",
        summary="an admin UI field key is invalid",
        what="Field keys must match `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$` (1-64 characters).",
        why="Keys are config paths sent back to the plugin (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.screens.fields]]\nkey = "api key"',
        fix='Use letters, digits, `_`, `.` and `-`: `key = "api_key"`.',
    ),
    Rule(
        code="NX168",
        name="admin-ui-select-without-options",
        severity="error",
        summary="a select/multiselect field has neither `options` nor `options_source`",
        what="Fields of type `select` or `multiselect` need key `options` or `options_source`.",
        why="The admin has nothing to offer (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.screens.fields]]\nkey = "unit"\ntype = "select"',
        fix='Add `options = [{ value = "c", label = "Celsius" }]` or an `options_source`.',
    ),
    Rule(
        code="NX169",
        name="admin-ui-invalid-visible-when",
        severity="error",
        summary="a `visible_when` expression does not parse",
        what="`visible_when` uses a small expression language: variables, strings, numbers, "
        "`true`/`false`, `== != < > <= >=`, `!`, `&&`, `||` and parentheses; at most 200 bytes "
        "and 5 levels deep.",
        why="The admin refuses expressions it cannot evaluate (`AdminUiInvalid`).",
        example="visible_when = \"mode = 'advanced'\"",
        fix="Fix the expression: `visible_when = \"mode == 'advanced'\"`.",
    ),
    Rule(
        code="NX170",
        name="admin-ui-invalid-parent",
        severity="error",
        summary="an admin UI contribution has an invalid `parent`",
        what="`parent` must name another existing contribution, and the parent chain must end "
        "within 5 hops without a cycle.",
        why="The menu tree could not be built (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.contributions]]\nid = "settings"\nparent = "settings"',
        fix="Point `parent` at an existing contribution, or use `slot` for a top-level entry.",
    ),
    Rule(
        code="NX171",
        name="admin-ui-unknown-slot",
        severity="error",
        summary="an admin UI contribution uses an unknown `slot`",
        what="`slot` must be a core slot (`core.sidebar.root`, `core.sidebar.channels`, "
        "`core.sidebar.integrations`, `core.sidebar.settings`, `core.agent_detail.tabs`, "
        "`core.command_palette.actions`) or `plugin.<plugin id>.<kebab-id>`.",
        why="The admin only renders known slots (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.contributions]]\nid = "w"\nslot = "sidebar"',
        fix='Use a core slot such as `slot = "core.sidebar.integrations"`.',
    ),
    Rule(
        code="NX172",
        name="admin-ui-contribution-unplaced",
        severity="error",
        summary="an admin UI contribution has neither `slot` nor `parent`",
        what="Every contribution needs a `slot` (top-level menu) or a `parent` (submenu).",
        why="The admin would not know where to show it (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.contributions]]\nid = "w"\nlabel = "Weather"',
        fix='Add `slot = "core.sidebar.integrations"` or `parent = "<contribution id>"`.',
    ),
    Rule(
        code="NX173",
        name="admin-ui-unknown-icon",
        severity="error",
        summary="an admin UI contribution icon is not in the supported Lucide subset",
        what="`icon` must be one of the 58 supported Lucide icon names (settings, mail, cloud, "
        "bot, plug, …).",
        why="The admin ships only that subset (`AdminUiInvalid`).",
        example='icon = "weather-sun"',
        fix='Pick a supported icon, e.g. `icon = "cloud"`.',
    ),
    Rule(
        code="NX174",
        name="admin-ui-unknown-screen",
        severity="error",
        summary="an admin UI contribution references an unknown screen",
        what="`screen` of a contribution must be the id of a `[[plugin.admin_ui.screens]]`.",
        why="The menu entry would lead nowhere (`AdminUiInvalid`).",
        example='[[plugin.admin_ui.contributions]]\nid = "w"\nscreen = "missing"',
        fix="Use the id of one of the screens, or add the screen.",
    ),
    # --- section validators the daemon does not run in validate() -------------------------
    Rule(
        code="NX180",
        name="invalid-poller-section",
        severity="warning",
        summary="`[plugin.poller]` fails the poller section's own validation",
        what="`kinds` is non-empty, each kind matches `^[a-z][a-z0-9_]+$` and is unique; "
        "`broker_topic_prefix` is non-empty, has no space and does not end with `.`; "
        "`max_concurrent_ticks` is 1-64; `tick_timeout_secs` is 1-3600.",
        why="The daemon's reference crate defines these checks for the poller section but its "
        "manifest validation does not run them; the poller subsystem may, so they are warnings.",
        example='[plugin.poller]\nkinds = []\nbroker_topic_prefix = "poll."',
        fix="Declare at least one kind and a prefix such as `plugin.weather.poll`.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX181",
        name="invalid-dashboard-section",
        severity="warning",
        summary="`[plugin.dashboard]` fails the dashboard section's own validation",
        what="`workspace_walk` needs a non-empty single-segment `subdir`; `file_presence` a "
        "non-empty relative `path`; `session_dir_files` at least one candidate.",
        why="Defined by the daemon's reference crate for this section but not run by its manifest "
        "validation (the dashboard subsystem may run it), so it is a warning.",
        example='[plugin.dashboard.layout]\nkind = "workspace_walk"\nsubdir = "a/b"',
        fix='Use a single directory name: `subdir = "sessions"`.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX182",
        name="invalid-metrics-section",
        severity="warning",
        summary="`[plugin.metrics]` fails the metrics section's own validation",
        what="With `prometheus = true`, `broker_topic_prefix` must be non-empty; it must never "
        "contain a space.",
        why="Defined by the daemon's reference crate for this section but not run by its manifest "
        "validation (the metrics subsystem may run it), so it is a warning.",
        example="[plugin.metrics]\nprometheus = true",
        fix='Add `broker_topic_prefix = "plugin.weather.metrics"`.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX183",
        name="invalid-admin-section",
        severity="warning",
        summary="`[plugin.admin]` fails the admin section's own validation",
        what="`method_prefix` must match `^nexo/admin/.+/$` (a sub-prefix of `nexo/admin/` "
        "ending in `/`); `broker_topic_prefix` must be non-empty without spaces.",
        why="Defined by the daemon's reference crate for this section but not run by its manifest "
        "validation (the admin subsystem may run it), so it is a warning.",
        example='[plugin.admin]\nmethod_prefix = "nexo/admin/"\nbroker_topic_prefix = "x"',
        fix='Use `method_prefix = "nexo/admin/weather/"`.',
        beyond_daemon=True,
    ),
    Rule(
        code="NX184",
        name="invalid-http-section",
        severity="warning",
        summary="`[plugin.http]` fails the http section's own validation",
        what="`mount_prefix` must be non-empty, start with `/` and contain no `?` or `#`.",
        why="Defined by the daemon's reference crate for this section but not run by its manifest "
        "validation (the HTTP subsystem may run it), so it is a warning.",
        example='[plugin.http]\nmount_prefix = "weather"',
        fix='Use `mount_prefix = "/weather"`.',
        beyond_daemon=True,
    ),
    # --- legacy ---------------------------------------------------------------------------
    Rule(
        code="NX190",
        name="legacy-v1-manifest",
        severity="error",
        summary="the manifest uses the legacy v1 shape (root `[transport]`)",
        what="A root table `[transport]` marks the legacy v1 manifest. nexo-pkg lints, packs and "
        "installs only the v2 shape.",
        why="The daemon's plugin discovery parses the v2 shape only and refuses a v1 document "
        "(unknown field `transport`); only the manifest crate's own helper migrates v1, and it "
        "drops several v1 keys on the way.",
        example='[plugin]\nid = "weather"\nmin_agent_version = "0.1"\n[transport]\n'
        'kind = "stdio"\ncommand = "./weather"',
        fix="Move `[transport] command`/`args` to `[plugin.entrypoint] command`/`args`, rename "
        "`min_agent_version` to `min_nexo_version`, move `[capabilities]` and `[meta]` under "
        "`[plugin]`, add `manifest_version = 2`, and drop `priority`, `[context]`, "
        "`[mcp_servers]` and `[outbound_bindings]`.",
    ),
    Rule(
        code="NX123",
        name="min-nexo-version-unreleased",
        severity="warning",
        summary="`min_nexo_version` matches no daemon release nexo-pkg knows",
        what="Without `--nexo-version`, the requirement is compared with every daemon release "
        "nexo-pkg knows; one that none of them satisfies is reported. With `--nexo-version`, "
        "NX105 compares it with that version instead (an error).",
        why="No released daemon nexo-pkg knows would load the plugin; usually the requirement "
        "has a typo (`>=1.2` for `>=0.1.2`) or targets a daemon newer than nexo-pkg knows.",
        example='[plugin]\nmin_nexo_version = ">=9.0"',
        fix="Fix the requirement, or lint with `--nexo-version` set to the daemon you target.",
        beyond_daemon=True,
    ),
    Rule(
        code="NX124",
        name="entrypoint-nul-byte",
        severity="error",
        summary="The entrypoint's command, arguments or environment hold a NUL byte",
        what="With `[plugin.entrypoint] command` set, the command, every `args` item and every "
        "key and value of `[plugin.entrypoint.env]` must be free of NUL (`\\u0000`).",
        why="The daemon's manifest validation accepts them, but the operating system cannot "
        "pass a NUL byte to a program: the spawn fails (`nul byte found in provided data`) and "
        "the plugin never runs.",
        example='[plugin.entrypoint]\ncommand = "./bin/weather"\nargs = ["--mode\\u0000fast"]',
        fix="Remove the `\\u0000` escape.",
    ),
    Rule(
        code="NX191",
        name="control-character",
        severity="warning",
        summary="a string or key holds a control character",
        what="Reports every string value and key that holds a C0 control character other than "
        "tab and line feed (U+0000-U+001F: ESC, carriage return, backspace, ...), DEL (U+007F) "
        "or a C1 control character (U+0080-U+009F).",
        why="The daemon accepts them, but they reach terminals, logs and confirmation screens "
        "where an escape sequence can rewrite what the operator sees; no manifest needs one. "
        "`nexo plugin install` shows such characters escaped.",
        example='[plugin]\nname = "Weather\\u001b[2J"',
        fix="Remove the control character; write plain text.",
        beyond_daemon=True,
    ),
)

SEMANTIC_RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
