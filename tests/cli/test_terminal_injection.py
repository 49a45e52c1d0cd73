"""Untrusted text reaches the terminal escaped: an escape sequence in a manifest cannot redraw
the confirmation screen, forge a signer or hide the NOT SIGNED warning."""

from __future__ import annotations

import os
from pathlib import Path

from support.cli import nexo
from support.tarballs import manifest_text, plugin_members, targz, write_plugin

from nexo_pkg.core.terminal import printable

# Erase the line, move up, erase again, print a fake signer, then conceal what follows (SGR 8).
ATTACK = "\\u001b[2K\\u001b[1A\\u001b[2KSigner:       https://github.com/acme (verified)\\u001b[8m"
ATTACK_TEXT = "\x1b[2K\x1b[1A\x1b[2KSigner:       https://github.com/acme (verified)\x1b[8m"


def hostile_plugin(directory: Path) -> Path:
    text = manifest_text("hello", "1.0.0").replace(
        'name = "Hello plugin"', f'name = "Hello{ATTACK}"'
    )
    text += '\n[plugin.entrypoint]\ncommand = "python3"\nenv = { GREETING = "hi\\u009b31m\\nX" }\n'
    data = targz(plugin_members("hello", "1.0.0", manifest=text))
    return write_plugin(directory, "hello", "1.0.0", data=data)


def test_an_escape_sequence_cannot_hide_not_signed(tmp_path: Path) -> None:
    tarball = hostile_plugin(tmp_path / "dist")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEXO_", "FORCE_COLOR"))}
    env.update(NEXO_HOME=str(tmp_path / "home"), NO_COLOR="1")
    result = nexo("plugin", "install", str(tarball), "--dry-run", env=env, in_process=True)
    assert result.code == 0, result.stderr
    screen = result.stderr
    # No control character of the manifest reaches the terminal raw: not ESC, not the C1 CSI.
    assert "\x1b" not in screen
    assert "\x9b" not in screen
    assert "\\u001b[2K" in screen
    # The forged signer stays inside the Plugin line; the real one says unsigned.
    signer_lines = [line for line in screen.splitlines() if line.startswith("Signer:")]
    assert signer_lines == ["Signer:       unsigned"]
    assert "NOT SIGNED" in screen
    # The line feed in the env value is shown, not obeyed.
    assert "GREETING=hi\\u009b31m\\u000aX" in screen


def test_printable_escapes_every_control_character() -> None:
    controls = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x202E, 0x2066]
    for code in controls:
        shown = printable(f"a{chr(code)}b")
        assert chr(code) not in shown, hex(code)
        assert shown == f"a\\u{code:04x}b"
    assert printable("héllo ✓ 🎉") == "héllo ✓ 🎉"
    assert printable(ATTACK_TEXT).isprintable()


def test_every_manifest_string_on_the_screen_is_escaped(tmp_path: Path) -> None:
    """The entrypoint's command and args, env keys and values, the description and the
    sandbox paths each reach the confirmation screen escaped: C0, C1 and DEL alike."""
    bad = "\\u001b[8m\\u009b2J\\u007f"
    extra = (
        f'\n[plugin.entrypoint]\ncommand = "python3{bad}"\nargs = ["-m{bad}", "main"]\n'
        f'env = {{ "KEY{bad}" = "value{bad}" }}\n\n'
        f'[plugin.sandbox]\nenabled = true\nfs_read_paths = ["/r{bad}"]\n'
        f'fs_write_paths = ["/w{bad}"]\n'
    )
    text = manifest_text("hello", "1.0.0", extra=extra).replace(
        'name = "Hello plugin"', f'name = "Hello{bad}"'
    )
    tarball = write_plugin(
        tmp_path / "dist", "hello", "1.0.0",
        data=targz(plugin_members("hello", "1.0.0", manifest=text)),
    )  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEXO_", "FORCE_COLOR"))}
    env.update(NEXO_HOME=str(tmp_path / "home"), NO_COLOR="1")
    result = nexo("plugin", "install", str(tarball), "--dry-run", env=env)
    assert result.code == 0, result.stderr
    screen = result.stderr + result.stdout
    assert not [ch for ch in screen if ch != "\n" and not ch.isprintable()], screen
    shown = bad  # the screen spells each control character as its TOML escape
    for line in (
        f"Entrypoint:   python3{shown} -m{shown} main",
        f"Environment:  KEY{shown}=value{shown}",
        f"  reads:      /r{shown}",
        f"  writes:     /w{shown}",
    ):
        assert line in screen.splitlines(), line
    assert not (tmp_path / "home" / "state").exists()
