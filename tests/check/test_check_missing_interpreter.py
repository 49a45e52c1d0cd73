"""A packed launcher whose ``#!`` interpreter this host lacks (Alpine ships no bash): the
check's failure line names the interpreter and what to install (docs/install.md, "Alpine and
other musl hosts": ``apk add bash``). Only the words change: the verdict, the failing check and
the exit code are those of any plugin that does not start. Each plugin is spawned for real."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .check_plugins import cli_check, python_first_on_path, sdk_packed


def _packed_with(root: Path, shebang: str) -> Path:
    """The SDK fixture packed (``bin/sdkdemo`` launcher), its first line ``shebang``."""
    sdk_packed(root)
    launcher = root / "bin" / "sdkdemo"
    body = launcher.read_text(encoding="utf-8").split("\n", 1)[1]
    launcher.write_text(f"{shebang}\n{body}", encoding="utf-8", newline="\n")
    return root


def _statuses(document: dict[str, object]) -> list[tuple[str, str]]:
    checks = document["checks"]
    assert isinstance(checks, list)
    return [(check["name"], check["status"]) for check in checks]


def _detail(document: dict[str, object], name: str) -> str:
    checks = document["checks"]
    assert isinstance(checks, list)
    (detail,) = [check["detail"] for check in checks if check["name"] == name]
    return str(detail)


def test_an_env_interpreter_on_no_path_directory_is_named(tmp_path: Path) -> None:
    root = _packed_with(tmp_path / "packed", "#!/usr/bin/env nexo-no-such-shell")
    code, document = cli_check(root)
    assert code == 1
    assert document["ok"] is False
    # The plugin started (env ran) and exited 127 without a reply: initialize fails, as before.
    assert ("spawn", "pass") in _statuses(document)
    assert ("initialize", "fail") in _statuses(document)
    assert [status for _, status in _statuses(document)].count("fail") == 1
    detail = _detail(document, "initialize")
    assert detail.startswith("no reply to initialize: the plugin exited with code 127")
    assert detail.endswith(
        "; the launcher's `#!/usr/bin/env nexo-no-such-shell` names an interpreter this host "
        "lacks (`env` finds no `nexo-no-such-shell` on PATH): install `nexo-no-such-shell` on "
        "this host or change the launcher's first line"
    )
    assert any("nexo-no-such-shell" in line for line in document["stderr_tail"])


def test_bash_missing_from_path_gives_the_alpine_remedy(tmp_path: Path) -> None:
    """What an Alpine host without bash sees: ``env`` finds no ``bash`` on PATH."""
    root = _packed_with(tmp_path / "packed", "#!/usr/bin/env bash")
    no_bash = tmp_path / "bin-without-bash"
    no_bash.mkdir()
    (no_bash / "python3").symlink_to(os.path.realpath(sys.executable))
    code, document = cli_check(root, env={"PATH": str(no_bash)})
    assert code == 1
    assert ("initialize", "fail") in _statuses(document)
    assert _detail(document, "initialize").endswith(
        "; the launcher's `#!/usr/bin/env bash` names an interpreter this host lacks (`env` "
        "finds no `bash` on PATH): install it (on Alpine, which ships only BusyBox `sh`: "
        "`apk add bash`)"
    )


def test_an_absolute_interpreter_that_does_not_exist_is_named_at_spawn(tmp_path: Path) -> None:
    """``#!/bin/bash`` where there is none: the kernel refuses the exec (ENOENT)."""
    missing = tmp_path / "no-such-dir" / "bash"
    root = _packed_with(tmp_path / "packed", f"#!{missing}")
    code, document = cli_check(root)
    assert code == 1
    assert _statuses(document)[-1] == ("spawn", "fail")
    assert _detail(document, "spawn") == (
        f"cannot start {root / 'bin' / 'sdkdemo'}: No such file or directory; the launcher's "
        f"`#!{missing}` names an interpreter this host lacks ({missing} does not exist): "
        "install it (on Alpine, which ships only BusyBox `sh`: `apk add bash`)"
    )


def test_a_present_interpreter_adds_nothing(tmp_path: Path) -> None:
    """The same launcher with bash and python3 on PATH passes, and a plugin that fails for
    another reason is not said to lack its interpreter."""
    root = _packed_with(tmp_path / "packed", "#!/usr/bin/env bash")
    code, document = cli_check(root, env={"PATH": python_first_on_path()})
    assert (code, document["ok"]) == (0, True)
    (root / "lib" / "plugin" / "main.py").write_text("raise SystemExit(3)\n", encoding="utf-8")
    code, document = cli_check(root, env={"PATH": python_first_on_path()})
    assert code == 1
    detail = _detail(document, "initialize")
    assert "exited with code 3" in detail
    assert "interpreter" not in detail
