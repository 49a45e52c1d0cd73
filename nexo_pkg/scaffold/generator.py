"""Render a plugin project from the templates and move it into place atomically (nothing
half-written: docs/pack.md).

Templates live in ``templates/<lang>/``. A path component ``dot-x`` becomes ``.x`` (so the
package data needs no dotfiles), a ``.tmpl`` suffix is dropped, and ``__NAME__`` placeholders
are replaced; files are UTF-8.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from nexo_pkg import __version__
from nexo_pkg.core.errors import EXIT_FAILURE, EXIT_USAGE, NexoError
from nexo_pkg.core.git import git_output
from nexo_pkg.core.terminal import CONTROL_CHARACTERS, printable, toml_string
from nexo_pkg.manifest.microapp import (
    EXT_NAME_PREFIX,
    MAX_DESCRIPTION_LENGTH,
    MAX_TOOL_NAME_LEN,
    RESERVED_IDS,
)
from nexo_pkg.manifest.names import find_manifest, shadowed_message
from nexo_pkg.scaffold.slug import MAX_LENGTH, SLUG_PATTERN, slug_problem

LANGUAGES = ("python",)
#: What ``new`` can create: a plugin (``[plugin.entrypoint]``, the ``nexoai`` SDK) or a
#: microapp (an extension-shaped ``plugin.toml`` for the daemon's extension host, stdlib only).
KINDS = ("plugin", "microapp")
TOOL_SUFFIX = "hello"
#: A GitHub login (`_` for enterprise managed users' `name_shortcode`).
GITHUB_OWNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}")


#: Line feed and the Unicode line and paragraph separators (carriage return, vertical tab,
#: form feed and NEL are control characters, refused as such).
_LINE_BREAKS = re.compile("[\n\u2028\u2029]")


class ScaffoldError(NexoError):
    """``new`` could not create the project."""

    kind = "usage"
    exit_code = EXIT_USAGE


@dataclass(frozen=True)
class NewProject:
    """Inputs of ``nexo plugin new``."""

    plugin_id: str
    lang: str = "python"
    dest: Path | None = None
    kind: str = "plugin"
    description: str | None = None
    owner: str | None = None
    force: bool = False
    # What the release workflow pip-installs nexo-pkg from; None: default_nexo_pkg_spec().
    nexo_pkg_spec: str | None = None


@dataclass(frozen=True)
class CreatedProject:
    """What was written: the project root and the files, relative to it."""

    path: Path
    files: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def tool_name_for(plugin_id: str, kind: str = "plugin") -> str:
    """``<id>_hello``, shortened so it stays within the 32-character slug limit and, for a
    microapp, so the model sees it whole: the daemon names it ``ext_<id>_<tool>`` and cuts
    and hashes a longer name than 64 bytes (``check`` warns ``tools.names``)."""
    room = MAX_LENGTH - len(plugin_id) - 1
    if room < 1:
        raise ScaffoldError(
            f"plugin id {plugin_id!r} leaves no room for a tool name: tool names are "
            f"`{plugin_id}_<name>` and share the {MAX_LENGTH}-character limit; "
            f"use an id of at most {MAX_LENGTH - 2} characters"
        )
    if kind == "microapp":
        # ext_ + id + _ + id + _ + name, within the 64 bytes (ids are ASCII).
        fixed = len(EXT_NAME_PREFIX) + 2 * len(plugin_id) + 2
        if MAX_TOOL_NAME_LEN - fixed < 1:
            longest = (MAX_TOOL_NAME_LEN - len(EXT_NAME_PREFIX) - 3) // 2
            raise ScaffoldError(
                f"microapp id {plugin_id!r} leaves no room for a tool name the model sees "
                f"whole: the daemon names a tool `{EXT_NAME_PREFIX}{plugin_id}_{plugin_id}_<name>` "
                f"and cuts and hashes one over {MAX_TOOL_NAME_LEN} characters; use an id of at "
                f"most {longest} characters"
            )
        room = min(room, MAX_TOOL_NAME_LEN - fixed)
    return f"{plugin_id}_{TOOL_SUFFIX[:room]}"


PROJECT_GIT_URL = "https://github.com/nexo-pkg/nexo-pkg"
_SPEC_NAME = re.compile(r"^nexo[-_.]pkg(?![A-Za-z0-9])", re.IGNORECASE)


@dataclass(frozen=True)
class Pin:
    """Where the release workflow installs nexo-pkg from, and a warning when that pin may not
    be what the author wants (a commit of an unreleased checkout, an unverified index pin)."""

    spec: str
    warning: str | None = None


def default_nexo_pkg_spec(direct_url: str | None, checkout: Path | None = None) -> Pin:
    """Where the release workflow installs nexo-pkg from, given the ``direct_url.json`` of the
    running installation (PEP 610; ``None`` from a package index), as docs/editors.md ("How
    the scaffolded workflow gets nexo-pkg") says. A local checkout (a ``file:`` URL nobody
    else can read, or ``checkout`` when nexo-pkg is not installed) gives what exists of it:
    its release tag when HEAD carries the tag of this version, else its commit, with a
    warning; without git, the index release of this version, with a warning."""
    if direct_url is None:
        return Pin(f"nexo-pkg=={__version__}")
    try:
        document = json.loads(direct_url)
    except ValueError:
        document = None
    url = document.get("url") if isinstance(document, dict) else None
    if isinstance(url, str) and not url.startswith("file:"):
        vcs = document.get("vcs_info") if isinstance(document, dict) else None
        if isinstance(vcs, dict) and vcs.get("vcs") == "git" and vcs.get("commit_id"):
            return Pin(f"nexo-pkg @ git+{url}@{vcs['commit_id']}")
        if isinstance(document, dict) and "archive_info" in document:
            return Pin(f"nexo-pkg @ {url}")
    if isinstance(url, str) and url.startswith("file:"):
        path = unquote(urlsplit(url).path)
        # file:///C:/x on Windows: the drive follows the URL's root slash.
        checkout = Path(path[1:] if re.match(r"/[A-Za-z]:", path) else path)
    return _checkout_pin(checkout)


def _checkout_pin(checkout: Path | None) -> Pin:
    """The pin for nexo-pkg running from the source tree ``checkout``."""
    index_pin = f"nexo-pkg=={__version__}"
    commit = None
    # The tree's own repository, not one it happens to lie in (an sdist unpacked in a project).
    top = None if checkout is None else git_output(checkout, "rev-parse", "--show-toplevel")
    if checkout is not None and top is not None and Path(top).resolve() == checkout.resolve():
        commit = git_output(checkout, "rev-parse", "--verify", "HEAD")
    if checkout is None or not commit or not re.fullmatch(r"[0-9a-f]{40,64}", commit):
        return Pin(
            index_pin,
            f"this nexo-pkg runs from {checkout or 'a source tree'}, which is no git checkout: "
            f"the release workflow installs {index_pin} from the package index; make sure "
            "that release exists, or choose with --nexo-pkg-spec",
        )
    remote = git_output(checkout, "remote", "get-url", "origin") or ""
    repository = remote if remote.startswith("https://") else PROJECT_GIT_URL
    tag = f"v{__version__}"
    if tag in (git_output(checkout, "tag", "--points-at", "HEAD") or "").split():
        return Pin(f"nexo-pkg @ git+{repository}@{tag}")
    spec = f"nexo-pkg @ git+{repository}@{commit}"
    dirty = git_output(checkout, "status", "--porcelain", "--untracked-files=no")
    unsaved = "; its uncommitted changes are not in that commit" if dirty else ""
    return Pin(
        spec,
        f"this nexo-pkg runs from a checkout that is not at the release tag {tag}: the "
        f"release workflow pins commit {commit[:12]} of {repository}, which must be pushed "
        f"there{unsaved}; choose another source with --nexo-pkg-spec",
    )


def installed_nexo_pkg_spec() -> Pin:
    """:func:`default_nexo_pkg_spec` for the nexo-pkg that is running."""
    from importlib import metadata  # noqa: PLC0415 - only `new` needs it

    try:
        direct_url = metadata.distribution("nexo-pkg").read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        direct_url = ""  # running from a checkout that is not installed
    # Not installed: the source tree this module is in.
    return default_nexo_pkg_spec(direct_url, Path(__file__).resolve().parents[2])


def checked_nexo_pkg_spec(spec: str) -> str:
    """``spec`` when it is one pip requirement naming nexo-pkg that is safe to write into a
    workflow's shell line; else ``usage`` (exit 2)."""
    text = spec.strip()
    if not _SPEC_NAME.match(text):
        raise ScaffoldError(
            f"--nexo-pkg-spec {spec!r} must be a pip requirement for nexo-pkg, such as "
            f"'nexo-pkg=={__version__}' or 'nexo-pkg @ git+{PROJECT_GIT_URL}@v{__version__}'"
        )
    if not text.isprintable() or not text.isascii() or "${{" in text:
        raise ScaffoldError(
            f"--nexo-pkg-spec {spec!r} holds characters a requirement does not need "
            "(control characters, non-ASCII, or a GitHub expression `${{`)"
        )
    return text


def nexo_pkg_pin(request: NewProject) -> Pin:
    """What the release workflow of ``request`` installs nexo-pkg from: ``--nexo-pkg-spec``
    (checked), else :func:`installed_nexo_pkg_spec`."""
    if request.nexo_pkg_spec is not None:
        return Pin(checked_nexo_pkg_spec(request.nexo_pkg_spec))
    return installed_nexo_pkg_spec()


def placeholders(request: NewProject, tool_name: str, pin: Pin | None = None) -> dict[str, str]:
    """The values substituted into the templates."""
    plugin_id = request.plugin_id
    name = plugin_id.replace("_", " ").title()
    description = (request.description or f"The {name} nexo {request.kind}.").strip()
    return {
        "__PLUGIN_NAME_TOML__": toml_string(name),
        "__DESCRIPTION_TOML__": toml_string(description),
        "__DESCRIPTION__": description,
        "__TOOL_NAME__": tool_name,
        "__OWNER__": request.owner or "OWNER",
        "__REPO__": "nexo-plugin-" + plugin_id.replace("_", "-"),
        "__NEXO_PKG_SPEC__": shlex.quote((pin or nexo_pkg_pin(request)).spec),
        "__PLUGIN_ID__": plugin_id,
    }


def _walk(node: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    for child in sorted(node.iterdir(), key=lambda item: item.name):
        if child.name == "__pycache__" or child.name.endswith(".pyc"):
            continue
        name = (
            "." + child.name.removeprefix("dot-") if child.name.startswith("dot-") else child.name
        )
        relative = f"{prefix}{name}"
        if child.is_dir():
            yield from _walk(child, relative + "/")
        else:
            yield relative, child


#: Templates a kind shares with another: ``(directory, subtree)`` rendered into the project
#: too. A microapp packs, signs and releases as a plugin does, so it gets the plugin's
#: release workflow (one file, so a change to it reaches both).
SHARED_TEMPLATES: dict[str, tuple[tuple[str, str], ...]] = {
    "microapp": (("python", "dot-github"),),
}


def render(request: NewProject, pin: Pin | None = None) -> dict[str, str]:
    """Map each project file (relative POSIX path) to its rendered text; ``invalid_id`` (exit
    2) for an id that breaks the slug rule, ``usage`` for an unknown language or kind."""
    problem = slug_problem(request.plugin_id)
    if problem is not None:
        # The daemon takes a hyphenated microapp id, but the tarball, its companion
        # manifest and the install directory follow the plugin id rule.
        why = (
            "; a microapp id may hold `-` for the daemon, but `pack` and `install` name its "
            "tarball and directory by the plugin id rule"
            if request.kind == "microapp" and "-" in request.plugin_id
            else ""
        )
        raise ScaffoldError(
            f"invalid plugin id {request.plugin_id!r}: {problem} (ids match {SLUG_PATTERN}){why}",
            kind="invalid_id",
        )
    if request.kind == "microapp" and request.plugin_id in RESERVED_IDS:
        # The extension parser refuses these ids (crates/extensions/src/manifest.rs
        # RESERVED_IDS): the daemon would skip the microapp at discovery.
        raise ScaffoldError(
            f"invalid plugin id {request.plugin_id!r}: the daemon reserves it for a native "
            f"plugin and skips a microapp of that id (reserved: {', '.join(sorted(RESERVED_IDS))})"
            f"; choose another, such as '{request.plugin_id}_app'",
            kind="invalid_id",
        )
    if request.lang not in LANGUAGES:
        raise ScaffoldError(
            f"unsupported --lang {request.lang!r}; supported: {', '.join(LANGUAGES)}"
        )
    if request.kind not in KINDS:
        raise ScaffoldError(f"unsupported --kind {request.kind!r}; supported: {', '.join(KINDS)}")
    if request.description is not None and not request.description.strip():
        raise ScaffoldError("--description must not be blank")
    if request.description is not None and _LINE_BREAKS.search(request.description):
        # The manifest's description is a one-line string (`new` would escape the break as
        # \u000a) and the README's line under the title; a break is never what either holds.
        raise ScaffoldError(
            f"--description holds a line break ({printable(request.description)}); "
            "it is one line: the manifest's description and the README's first line"
        )
    if request.description is not None and CONTROL_CHARACTERS.search(request.description):
        # Lint warns about it (NX191) and the README would carry it raw to a terminal.
        raise ScaffoldError(
            f"--description holds a control character ({printable(request.description)}); "
            "the project must lint clean: remove it"
        )
    if (
        request.kind == "microapp"
        and request.description is not None
        and len(request.description) > MAX_DESCRIPTION_LENGTH
    ):
        # The extension parser refuses a longer one (`DescriptionTooLong`, counted in chars).
        raise ScaffoldError(
            f"--description has {len(request.description)} characters; a microapp's "
            f"description may have at most {MAX_DESCRIPTION_LENGTH} (the daemon skips the "
            "microapp otherwise)"
        )
    if request.owner is not None and not GITHUB_OWNER.fullmatch(request.owner):
        raise ScaffoldError(
            f"--owner {request.owner!r} is not a GitHub user or organization name: up to 39 "
            "letters, digits, `-` and `_`, not starting with `-` (the README's install command "
            "and trust policy name it)"
        )
    values = placeholders(request, tool_name_for(request.plugin_id, request.kind), pin)
    directory = request.lang if request.kind == "plugin" else f"{request.kind}-{request.lang}"
    templates = resources.files("nexo_pkg.scaffold") / "templates"
    walks = [_walk(templates / directory)]
    for shared, subtree in SHARED_TEMPLATES.get(request.kind, ()):
        prefix = "." + subtree.removeprefix("dot-") if subtree.startswith("dot-") else subtree
        walks.append(_walk(templates / shared / subtree, prefix + "/"))
    files: dict[str, str] = {}
    for template_path, template in (item for walk in walks for item in walk):
        text = template.read_text(encoding="utf-8")
        relative = template_path
        for key, value in values.items():
            text = text.replace(key, value)
            relative = relative.replace(key, value)
        # `.tmpl` keeps template manifests (not valid TOML before rendering) out of reach of
        # `nexo plugin lint` and the pre-commit hook when they scan this repository.
        files[relative.removesuffix(".tmpl")] = text
    return files


def _not_a_directory(location: Path) -> str | None:
    """Why ``location`` cannot be made when a file stands where one of its parent directories
    goes (mkdir would only say "File exists" or "Not a directory")."""
    for parent in location.parents:
        if parent.exists() or parent.is_symlink():
            return None if parent.is_dir() else f"{parent} is a file, not a directory"
    return None


def create_project(request: NewProject) -> CreatedProject:
    """Create the project at ``request.dest`` (default ``./<id>``).

    Refuses (exit 2) an invalid id, an unknown language, a destination that is a file, and a
    non-empty directory unless ``force``; with ``force`` the generated files replace their
    namesakes and other files stay. Write failures raise ``io`` (exit 1) and leave the
    destination as it was.
    """
    pin = nexo_pkg_pin(request)
    files = render(request, pin)
    dest = request.dest if request.dest is not None else Path(request.plugin_id)
    # Work on the normalised absolute path: `--dest .` and `--dest x/..` have no usable name.
    # (`realpath`: `Path.resolve` raises RuntimeError on a link loop before Python 3.13.)
    location = Path(os.path.realpath(dest))
    # What realpath leaves a link is one that loops: nothing can be made through it.
    loop = next((part for part in (location, *location.parents) if part.is_symlink()), None)
    if loop is not None:
        raise ScaffoldError(
            f"{dest} leads through {loop}, a symbolic link that loops; remove it or choose "
            "another --dest",
            kind="destination_exists",
        )
    if location.exists() and not location.is_dir():
        raise ScaffoldError(f"{dest} exists and is not a directory", kind="destination_exists")
    existing = location.is_dir()
    if existing and any(location.iterdir()) and not request.force:
        raise ScaffoldError(
            f"{dest} exists and is not empty; choose another --dest or pass --force to "
            "overwrite the generated files",
            kind="destination_exists",
        )
    if existing:
        _check_namesakes(location, dest, files)
    try:
        location.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{location.name}.new-", dir=location.parent))
    except OSError as exc:
        raise ScaffoldError(
            f"cannot create {dest}: {_not_a_directory(location) or exc.strerror}",
            kind="io",
            exit_code=EXIT_FAILURE,
        ) from exc
    moved: list[Path] = []
    try:
        for relative, text in files.items():
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="\n")
            if relative.startswith("bin/"):
                # Launchers run directly; honour the umask for the read and execute bits too.
                target.chmod(0o777 & ~_umask())
        if not existing:
            staging.chmod(0o777 & ~_umask())
            staging.rename(location)
        else:
            # An existing directory (empty, or populated with --force) is kept, never
            # replaced: it may be the shell's working directory or hold a .git. Every file is
            # complete before it is moved; each move is an atomic replace; other files stay.
            for relative in files:
                target = location / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                (staging / relative).replace(target)
                moved.append(target)
    except OSError as exc:
        if existing and not request.force:
            # The directory was empty: take it back to empty.
            for target in moved:
                target.unlink(missing_ok=True)
        raise ScaffoldError(
            f"cannot write {dest}: {exc.strerror}", kind="io", exit_code=EXIT_FAILURE
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    warnings = (pin.warning,) if pin.warning else ()
    return CreatedProject(dest, tuple(files), (*warnings, *_shadowing_manifests(location, files)))


def _shadowing_manifests(location: Path, files: dict[str, str]) -> list[str]:
    """A warning when a manifest already in the directory (kept by ``--force``) shadows the
    generated one: `pack`, `lint` and the daemon would read the old file, not the new one."""
    lookup = find_manifest(location)
    if lookup.path is None or lookup.path.name in files:
        return []
    return [
        f"{lookup.path.name} was already in the directory and is kept; "
        + shadowed_message(lookup.path.name, shadowed.name)
        + f" (pack and lint read {lookup.path.name}, not the new {shadowed.name})"
        for shadowed in lookup.shadowed
        if shadowed.name in files
    ]


def _check_namesakes(location: Path, dest: Path, files: dict[str, str]) -> None:
    """Refuse (``destination_exists``) a directory where a generated file goes, or a file or
    a symbolic link where one of its directories goes, before anything is moved: each would
    stop the moves halfway and leave a half-written project, or (a link to a directory) write
    generated files outside the destination."""
    for relative in files:
        parts = relative.split("/")
        for depth in range(1, len(parts) + 1):
            path = location.joinpath(*parts[:depth])
            is_file_place = depth == len(parts)
            if path.is_symlink():
                if is_file_place:
                    continue  # the move replaces the link itself, never its target
                # Followed, it would put generated files outside the destination (a link to
                # a directory) or stop the moves halfway (a link to a file, or to nothing).
                what = "is a symbolic link where a generated directory goes"
            elif not path.exists():
                continue
            elif is_file_place and path.is_dir():
                what = "is a directory where the generated file goes"
            elif not is_file_place and not path.is_dir():
                what = "is a file where a generated directory goes"
            else:
                continue
            shown = dest.joinpath(*parts[:depth])
            raise ScaffoldError(
                f"{shown} {what}; --force replaces generated files only: move it away",
                kind="destination_exists",
            )


def _umask() -> int:
    # os.umask can only be read by setting it; restore it straight away.
    current = os.umask(0o022)
    os.umask(current)
    return current
