"""Pairing, public tunnel, and the poller/dashboard/metrics/admin/http section validators."""

from __future__ import annotations

import tomllib

import pytest

from nexo_pkg.core.diagnostics import Diagnostic
from nexo_pkg.manifest.options import LintOptions
from nexo_pkg.manifest.rules import check_semantics

from .rule_support import BASE, locate

FIELD = '[[plugin.pairing.fields]]\nname = "token"\nlabel = "Token"\n'
TRIGGER = '[plugin.pairing.trigger]\nstart_method = "{}"\ncancel_method = "{}"\n'


def run(extra: str) -> list[Diagnostic]:
    return check_semantics(tomllib.loads(BASE + extra), locate, LintOptions())


def found(extra: str) -> list[tuple[str, str]]:
    return [(d.code, d.key_path) for d in run(extra)]


# --- pairing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ('[plugin.pairing]\nlabel = "x"\n' + FIELD + TRIGGER.format("", ""), []),
        ('[plugin.pairing]\nkind = "form"\n', [("NX150", "plugin.pairing.kind")]),
        ('[plugin.pairing]\nkind = "form"\nfields = []\n', [("NX150", "plugin.pairing.kind")]),
        ('[plugin.pairing]\nkind = "form"\n' + FIELD, []),
        ('[plugin.pairing]\nkind = "custom"\n', [("NX151", "plugin.pairing.kind")]),
        (
            '[plugin.pairing]\nkind = "custom"\nrpc_namespace = ""\n',
            [("NX151", "plugin.pairing.rpc_namespace")],
        ),
        ('[plugin.pairing]\nkind = "custom"\nrpc_namespace = " "\n', []),
        (
            '[plugin.pairing]\nkind = "custom"\nrpc_namespace = "w"\n' + FIELD,
            [("NX152", "plugin.pairing.fields")],
        ),
        ('[plugin.pairing]\nkind = "info"\n' + FIELD, [("NX152", "plugin.pairing.fields")]),
        ('[plugin.pairing]\nkind = "info"\n', []),
        ('[plugin.pairing]\nkind = "qr"\n' + FIELD + TRIGGER.format("a", "b"), []),
        (
            '[plugin.pairing]\nkind = "qr"\n' + TRIGGER.format(" ", ""),
            [
                ("NX153", "plugin.pairing.trigger.start_method"),
                ("NX153", "plugin.pairing.trigger.cancel_method"),
            ],
        ),
        (
            '[plugin.pairing]\nkind = "form"\n' + FIELD + TRIGGER.format("a", "b"),
            [("NX154", "plugin.pairing.trigger")],
        ),
        ('[plugin.pairing]\nkind = "bogus"\n', []),  # unknown kind: the schema's enum
    ],
)
def test_pairing(extra: str, expected: list[tuple[str, str]]) -> None:
    assert found(extra) == expected


def test_pairing_trigger_message_names_the_kind() -> None:
    (diagnostic,) = run('[plugin.pairing]\nkind = "info"\n' + TRIGGER.format("a", "b"))
    assert '(got "info")' in diagnostic.message


# --- public tunnel ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("subject", "code"),
    [
        ("", "NX155"),
        ("  ", "NX155"),
        ("weather.*", "NX156"),
        ("weather.>", "NX156"),
        (" * ", "NX156"),
        ("weather.a*", None),
        ("weather.paired", None),
        ("a..b", None),
    ],
)
def test_public_tunnel(subject: str, code: str | None) -> None:
    result = found(f'[plugin.public_tunnel]\nclose_on_event = "{subject}"\n')
    assert result == ([(code, "plugin.public_tunnel.close_on_event")] if code else [])


# --- section validators (warnings) ------------------------------------------------------------


def test_section_validators_are_warnings() -> None:
    diagnostics = run('[plugin.http]\nmount_prefix = "x"\n')
    assert [(d.code, d.severity) for d in diagnostics] == [("NX184", "warning")]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('kinds = ["feed"]\nbroker_topic_prefix = "p"', []),
        ('kinds = []\nbroker_topic_prefix = "p"', ["plugin.poller.kinds"]),
        (
            'kinds = ["a", "Feed", "feed", "feed"]\nbroker_topic_prefix = "p"',
            ["plugin.poller.kinds[0]", "plugin.poller.kinds[1]", "plugin.poller.kinds[3]"],
        ),
        ('kinds = ["feed"]\nbroker_topic_prefix = ""', ["plugin.poller.broker_topic_prefix"]),
        ('kinds = ["feed"]\nbroker_topic_prefix = "a."', ["plugin.poller.broker_topic_prefix"]),
        ('kinds = ["feed"]\nbroker_topic_prefix = "a b"', ["plugin.poller.broker_topic_prefix"]),
        (
            'kinds = ["feed"]\nbroker_topic_prefix = "p"\nmax_concurrent_ticks = 0\n'
            "tick_timeout_secs = 3601",
            ["plugin.poller.max_concurrent_ticks", "plugin.poller.tick_timeout_secs"],
        ),
        (
            'kinds = ["feed"]\nbroker_topic_prefix = "p"\nmax_concurrent_ticks = 64\n'
            "tick_timeout_secs = 3600",
            [],
        ),
    ],
)
def test_poller(body: str, expected: list[str]) -> None:
    assert found(f"[plugin.poller]\n{body}\n") == [("NX180", path) for path in expected]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            'layout = { kind = "workspace_walk", subdir = "" }\n'
            'auth_check = { kind = "file_presence", path = "" }',
            ["plugin.dashboard.layout.subdir", "plugin.dashboard.auth_check.path"],
        ),
        (
            'layout = { kind = "workspace_walk", subdir = "a/b" }\n'
            'auth_check = { kind = "file_presence", path = "/etc/token" }',
            ["plugin.dashboard.layout.subdir", "plugin.dashboard.auth_check.path"],
        ),
        (
            'layout = { kind = "single" }\n'
            'auth_check = { kind = "session_dir_files", candidates = [] }',
            ["plugin.dashboard.auth_check.candidates"],
        ),
        (
            'layout = { kind = "single" }\n'
            'auth_check = { kind = "session_dir_files", candidates = ["a.json"] }',
            [],
        ),
    ],
)
def test_dashboard(body: str, expected: list[str]) -> None:
    assert found(f"[plugin.dashboard]\n{body}\n") == [("NX181", path) for path in expected]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("prometheus = true", ["plugin.metrics.prometheus"]),
        ('prometheus = true\nbroker_topic_prefix = ""', ["plugin.metrics.broker_topic_prefix"]),
        ('broker_topic_prefix = "a b"', ["plugin.metrics.broker_topic_prefix"]),
        ("prometheus = false", []),
        ('prometheus = true\nbroker_topic_prefix = "m"', []),
    ],
)
def test_metrics(body: str, expected: list[str]) -> None:
    assert found(f"[plugin.metrics]\n{body}\n") == [("NX182", path) for path in expected]


@pytest.mark.parametrize(
    ("prefix", "reason"),
    [
        ("weather/", "must start with `nexo/admin/`"),
        ("nexo/admin/weather", "must end with `/`"),
        ("nexo/admin/", "root admin namespace"),
        ("nexo/admin/weather/", None),
    ],
)
def test_admin_method_prefix(prefix: str, reason: str | None) -> None:
    diagnostics = run(f'[plugin.admin]\nmethod_prefix = "{prefix}"\nbroker_topic_prefix = "b"\n')
    if reason is None:
        assert diagnostics == []
    else:
        assert [(d.code, d.key_path) for d in diagnostics] == [
            ("NX183", "plugin.admin.method_prefix")
        ]
        assert reason in diagnostics[0].message


def test_admin_broker_prefix() -> None:
    extra = '[plugin.admin]\nmethod_prefix = "nexo/admin/w/"\nbroker_topic_prefix = "{}"\n'
    assert found(extra.format("")) == [("NX183", "plugin.admin.broker_topic_prefix")]
    assert found(extra.format("a b")) == [("NX183", "plugin.admin.broker_topic_prefix")]


@pytest.mark.parametrize(
    ("prefix", "bad"),
    [("", True), ("weather", True), ("/weather?x", True), ("/w#a", True), ("/weather", False)],
)
def test_http_mount_prefix(prefix: str, bad: bool) -> None:
    result = found(f'[plugin.http]\nmount_prefix = "{prefix}"\n')
    assert result == ([("NX184", "plugin.http.mount_prefix")] if bad else [])
