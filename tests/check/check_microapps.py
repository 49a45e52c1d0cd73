"""Build microapp directories for the check tests."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from check.check_plugins import toml_string

MICROAPPS = Path(__file__).resolve().parent / "microapps"
SCRIPTED = MICROAPPS / "scripted_microapp.py"


def copy_microapp(name: str, root: Path) -> Path:
    """A copy of the static microapp ``name`` (``golden``, ``sdk_string_tools``)."""
    shutil.copytree(MICROAPPS / name, root)
    return root


def scripted_microapp(
    root: Path,
    mode: str,
    extra: str = "",
    *,
    extension_id: str = "scripted",
    companion: str | None = None,
    extra_toml: str = "",
) -> Path:
    """A microapp directory whose stdio command runs ``scripted_microapp.py MODE EXTRA`` with
    this interpreter; ``companion`` is the text of a ``nexo-plugin.toml`` beside it."""
    root.mkdir(parents=True, exist_ok=True)
    args = ", ".join(toml_string(item) for item in (str(SCRIPTED), mode, extra))
    (root / "plugin.toml").write_text(
        f"""[plugin]
id = "{extension_id}"
version = "0.1.0"

[capabilities]
tools = ["scripted_probe"]

[transport]
kind = "stdio"
command = {toml_string(sys.executable)}
args = [{args}]
{extra_toml}""",
        encoding="utf-8",
    )
    if companion is not None:
        (root / "nexo-plugin.toml").write_text(companion, encoding="utf-8")
    return root


def companion(
    extension_id: str, *, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()
) -> str:
    """A ``nexo-plugin.toml`` declaring admin capabilities for ``extension_id``."""

    def names(items: tuple[str, ...]) -> str:
        return ", ".join(toml_string(item) for item in items)

    return f"""[plugin]
id = "{extension_id}"
version = "0.1.0"
name = "Scripted"
description = "Test microapp"
min_nexo_version = ">=0.1.0"

[plugin.capabilities.admin]
required = [{names(required)}]
optional = [{names(optional)}]
"""
