"""`new`: the generated project lints clean, runs its own tests, and is written atomically."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.cli import TRACEBACK, nexo

from nexo_pkg import __version__
from nexo_pkg.core.errors import NexoError
from nexo_pkg.lint.engine import lint_file
from nexo_pkg.scaffold.generator import (
    KINDS,
    LANGUAGES,
    NewProject,
    Pin,
    create_project,
    default_nexo_pkg_spec,
    installed_nexo_pkg_spec,
    render,
    tool_name_for,
)

TEMPLATE_FILES = [
    ".gitattributes",
    ".github/workflows/release.yml",
    ".gitignore",
    "README.md",
    "plugin.toml",
    "requirements.txt",
    "src/main.py",
    "tests/__init__.py",
    "tests/test_handshake.py",
]


def expected_files(plugin_id: str = "demo") -> list[str]:
    return sorted([*TEMPLATE_FILES, f"bin/{plugin_id}"])


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _error(request: NewProject) -> NexoError:
    with pytest.raises(NexoError) as caught:
        create_project(request)
    return caught.value


def test_project_files_and_manifest(tmp_path: Path) -> None:
    dest = tmp_path / "weather"
    created = create_project(NewProject("weather", dest=dest, owner="acme"))
    assert created.path == dest
    assert _files(dest) == expected_files("weather")
    assert sorted(created.files) == expected_files("weather")
    result = lint_file(dest / "plugin.toml")
    assert result.diagnostics == ()
    manifest = tomllib.loads((dest / "plugin.toml").read_text())
    plugin = manifest["plugin"]
    assert (plugin["id"], plugin["version"]) == ("weather", "0.1.0")
    assert plugin["entrypoint"]["command"] == "./bin/weather"
    assert plugin["extends"]["tools"] == ["weather_hello"]
    assert (dest / "requirements.txt").read_text() == "nexoai>=0.4\n"
    main = (dest / "src" / "main.py").read_text()
    for name in ("PluginAdapter", "ToolDef", "text_result", "ToolArgumentInvalid"):
        assert name in main
    assert "__PLUGIN_ID__" not in "".join((dest / f).read_text() for f in created.files)
    assert "acme/nexo-plugin-weather" in (dest / "README.md").read_text()


def test_release_workflow(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    create_project(NewProject("demo", dest=dest))
    workflow = (dest / ".github" / "workflows" / "release.yml").read_text()
    for needle in (
        'tags: ["v*"]',
        "id-token: write",
        "contents: write",
        "fetch-depth: 0",
        '"$GITHUB_REF_NAME" != "v$version"',
        f"python -m pip install {shlex.quote(installed_nexo_pkg_spec().spec)}",
        "nexo plugin pack . --out dist",
        'python -m sigstore sign --bundle "$asset.sigstore.json" "$asset"',
        'asset + ".sig"',
        'asset + ".cert"',
        "actions/attest-build-provenance@",
        "actions/attest-sbom@",
        "sbom-path: ${{ steps.sbom.outputs.path }}",
        "gh release upload",
    ):
        assert needle in workflow, needle


def test_description_is_escaped_for_toml(tmp_path: Path) -> None:
    text = 'Says "hi" \\ and more: é'
    dest = tmp_path / "demo"
    create_project(NewProject("demo", dest=dest, description=text))
    assert lint_file(dest / "plugin.toml").success
    assert tomllib.loads((dest / "plugin.toml").read_text())["plugin"]["description"] == text


def test_long_ids_get_a_short_tool_name(tmp_path: Path) -> None:
    plugin_id = "p" * 30
    assert tool_name_for(plugin_id) == plugin_id + "_h"
    dest = tmp_path / "long"
    create_project(NewProject(plugin_id, dest=dest))
    assert lint_file(dest / "plugin.toml").success
    error = _error(NewProject("p" * 31, dest=tmp_path / "longer"))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert not (tmp_path / "longer").exists()


def test_generated_tests_pass_with_the_real_sdk(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    create_project(NewProject("demo", dest=dest))
    # The test interpreter has the real nexoai installed, as the project's venv would.
    completed = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-s", "tests", "-v"],
        cwd=dest,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Ran 4 tests" in completed.stderr


@pytest.mark.parametrize(
    # The last two hold characters str.isdigit takes for digits (Arabic-Indic, superscript).
    "plugin_id",
    ["", "Demo", "2demo", "my-plugin", "a" * 33, "_x", "a b", "a\u0661", "a\u00b2b"],
)
def test_invalid_id_is_refused_and_nothing_written(tmp_path: Path, plugin_id: str) -> None:
    dest = tmp_path / "out"
    error = _error(NewProject(plugin_id, dest=dest))
    assert (error.kind, error.exit_code) == ("invalid_id", 2)
    assert "^[a-z][a-z0-9_]{0,31}$" in error.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "owner", ["", "-acme", "acme corp", 'evil"; rm -rf / #', "acme/repo", "a" * 40, "acme.io"]
)
def test_an_owner_that_is_no_github_name_is_refused_and_nothing_written(
    tmp_path: Path, owner: str
) -> None:
    error = _error(NewProject("demo", dest=tmp_path / "demo", owner=owner))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert "--owner" in error.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("owner", ["acme", "Acme-Labs", "octocat_emu", "a" * 39])
def test_an_owner_is_written_into_the_readme(tmp_path: Path, owner: str) -> None:
    created = create_project(NewProject("demo", dest=tmp_path / "demo", owner=owner))
    readme = (created.path / "README.md").read_text(encoding="utf-8")
    assert f"nexo plugin install {owner}/nexo-plugin-demo" in readme
    assert f'owner = "{owner}"' in readme


def test_unknown_language(tmp_path: Path) -> None:
    error = _error(NewProject("demo", lang="cobol", dest=tmp_path / "demo"))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert list(tmp_path.iterdir()) == []


def test_non_empty_directory_needs_force(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n")
    (dest / "README.md").write_text("old readme\n")
    error = _error(NewProject("demo", dest=dest))
    assert (error.kind, error.exit_code) == ("destination_exists", 2)
    assert _files(dest) == ["README.md", "notes.txt"]
    assert (dest / "README.md").read_text() == "old readme\n"
    create_project(NewProject("demo", dest=dest, force=True))
    assert _files(dest) == sorted([*expected_files(), "notes.txt"])
    assert (dest / "notes.txt").read_text() == "mine\n"
    assert (dest / "README.md").read_text().startswith("# demo")
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]


def test_empty_directory_is_used(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    dest.mkdir()
    create_project(NewProject("demo", dest=dest))
    assert _files(dest) == expected_files()
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]


def test_destination_that_is_a_file(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    dest.write_text("file\n")
    for force in (False, True):
        error = _error(NewProject("demo", dest=dest, force=force))
        assert (error.kind, error.exit_code) == ("destination_exists", 2)
    assert dest.read_text() == "file\n"


def test_default_destination_is_the_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    created = create_project(NewProject("demo"))
    assert created.path == Path("demo")
    assert _files(tmp_path / "demo") == expected_files()


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0,
    reason="root writes into read-only directories; Windows has no POSIX modes",
)
def test_unwritable_parent_leaves_nothing(tmp_path: Path) -> None:
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        error = _error(NewProject("demo", dest=parent / "demo"))
    finally:
        parent.chmod(0o700)
    assert (error.kind, error.exit_code) == ("io", 1)
    assert list(parent.iterdir()) == []


def test_render_is_pure() -> None:
    assert render(NewProject("demo")) == render(NewProject("demo"))


def test_dev_launcher_runs_the_project(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    create_project(NewProject("demo", dest=dest))
    launcher = dest / "bin" / "demo"
    assert launcher.stat().st_mode & 0o111
    completed = subprocess.run(
        [str(launcher)],
        input='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n',
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"},
    )
    assert completed.returncode == 0, completed.stderr
    assert '"id": "demo"' in completed.stdout


def test_release_workflow_pins_every_action_by_commit(tmp_path: Path) -> None:
    """Mutable tags can be moved under a release job: every action is pinned by commit SHA,
    with its version in a comment."""
    dest = tmp_path / "demo"
    create_project(NewProject("demo", dest=dest))
    workflow = (dest / ".github" / "workflows" / "release.yml").read_text()
    uses = re.findall(r"uses: (\S+)(.*)", workflow)
    assert uses
    for reference, comment in uses:
        assert re.fullmatch(r"[\w-]+/[\w/-]+@[0-9a-f]{40}", reference), reference
        assert re.fullmatch(r" # v\d+(\.\d+)*", comment), comment


def test_release_workflow_is_valid_yaml(tmp_path: Path) -> None:
    import yaml

    dest = tmp_path / "demo"
    create_project(NewProject("demo", dest=dest))
    workflow = yaml.safe_load((dest / ".github" / "workflows" / "release.yml").read_text())
    assert workflow["permissions"] == {}
    jobs = workflow["jobs"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "build": {"contents": "read"},
        "sign": {"id-token": "write", "attestations": "write"},
        "publish": {"contents": "write"},
    }
    assert (jobs["sign"]["needs"], jobs["publish"]["needs"]) == ("build", "sign")
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as true
    names = [step.get("name", step.get("uses")) for step in jobs["build"]["steps"]]
    assert names.index("Check the tag matches the manifest version") < names.index("Lint and pack")
    # The job holding the OIDC token runs none of the plugin's code or dependencies.
    signing = yaml.safe_dump(jobs["sign"]["steps"])
    assert "requirements.txt" not in signing
    assert "unittest" not in signing
    assert "checkout" not in signing


@pytest.mark.parametrize(
    ("direct_url", "spec"),
    [
        (None, f"nexo-pkg=={__version__}"),
        (
            '{"url": "https://github.com/acme/nexo-pkg", "vcs_info": {"vcs": "git", '
            '"commit_id": "0123456789abcdef0123456789abcdef01234567"}}',
            "nexo-pkg @ git+https://github.com/acme/nexo-pkg"
            "@0123456789abcdef0123456789abcdef01234567",
        ),
        (
            '{"url": "https://example.com/nexo_pkg-0.1.0-py3-none-any.whl", "archive_info": {}}',
            "nexo-pkg @ https://example.com/nexo_pkg-0.1.0-py3-none-any.whl",
        ),
    ],
    ids=["index", "git", "archive"],
)
def test_the_default_spec_is_where_this_nexo_pkg_came_from(
    direct_url: str | None, spec: str
) -> None:
    """PEP 610's direct_url.json says where the running nexo-pkg was installed from."""
    assert default_nexo_pkg_spec(direct_url) == Pin(spec)


def _git(checkout: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(checkout), *arguments],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    return done.stdout.strip()


def _checkout(tmp_path: Path, *, origin: str | None = None) -> tuple[Path, str]:
    """A real git repository with one commit, standing in for a nexo-pkg source tree."""
    checkout = tmp_path / "nexo-pkg"
    checkout.mkdir(parents=True)
    _git(checkout, "init", "-q")
    (checkout / "pyproject.toml").write_text("[project]\nname = 'nexo-pkg'\n")
    _git(checkout, "add", "pyproject.toml")
    _git(checkout, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    if origin is not None:
        _git(checkout, "remote", "add", "origin", origin)
    return checkout, _git(checkout, "rev-parse", "HEAD")


def _editable(checkout: Path) -> str:
    return json.dumps({"url": checkout.as_uri(), "dir_info": {"editable": True}})


def test_an_untagged_checkout_pins_its_commit_with_a_warning(tmp_path: Path) -> None:
    # The repository has no tag of this version: a pin to `v0.1.0` would name nothing.
    checkout, commit = _checkout(tmp_path)
    pin = default_nexo_pkg_spec(_editable(checkout))
    assert pin.spec == f"nexo-pkg @ git+https://github.com/nexo-pkg/nexo-pkg@{commit}"
    assert pin.warning is not None
    assert f"not at the release tag v{__version__}" in pin.warning
    assert commit[:12] in pin.warning
    assert "uncommitted" not in pin.warning
    # Not installed at all (run from the tree): the same, from the tree it runs from.
    assert default_nexo_pkg_spec("", checkout) == pin
    # Uncommitted changes are not in the pinned commit: the warning says so.
    (checkout / "pyproject.toml").write_text("[project]\nname = 'nexo-pkg'\nversion = '9'\n")
    warning = default_nexo_pkg_spec(_editable(checkout)).warning
    assert warning is not None
    assert "uncommitted changes are not in that commit" in warning


def test_a_checkout_at_the_release_tag_pins_the_tag(tmp_path: Path) -> None:
    checkout, _ = _checkout(tmp_path, origin="https://github.com/acme/nexo-pkg.git")
    _git(checkout, "tag", f"v{__version__}")
    assert default_nexo_pkg_spec(_editable(checkout)) == Pin(
        f"nexo-pkg @ git+https://github.com/acme/nexo-pkg.git@v{__version__}"
    )
    # Another tag on HEAD is not this version's release.
    other, commit = _checkout(tmp_path / "other")
    _git(other, "tag", "v9.9.9")
    assert default_nexo_pkg_spec(_editable(other)).spec.endswith(f"@{commit}")


def test_a_tree_without_git_pins_the_index_release_with_a_warning(tmp_path: Path) -> None:
    # An unpacked sdist (no .git of its own), inside another project's repository: that
    # repository's commit is not nexo-pkg's.
    project, _ = _checkout(tmp_path)
    tree = project / "vendor" / "nexo-pkg-0.1.0"
    tree.mkdir(parents=True)
    pin = default_nexo_pkg_spec(_editable(tree))
    assert pin.spec == f"nexo-pkg=={__version__}"
    assert pin.warning is not None
    assert "no git checkout" in pin.warning
    assert "--nexo-pkg-spec" in pin.warning


def test_new_prints_the_pin_warning_and_writes_the_commit(tmp_path: Path) -> None:
    """This very checkout (an editable install, untagged): `new` warns on stderr and the
    workflow installs nexo-pkg at a commit that exists."""
    pin = installed_nexo_pkg_spec()
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "nexo_pkg",
            "plugin",
            "new",
            "demo",
            "-q",
            "--dest",
            str(tmp_path / "demo"),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    workflow = (tmp_path / "demo" / ".github" / "workflows" / "release.yml").read_text()
    assert f"python -m pip install {shlex.quote(pin.spec)}" in workflow
    assert "@v0.1.0" not in workflow or pin.warning is None
    if pin.warning is not None:
        assert completed.stderr == f"warning: {pin.warning}\n"
    else:
        assert completed.stderr == ""


_PLACEHOLDER = re.compile(r"__[A-Z][A-Z0-9_]*__")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {
            "description": 'Forecasts, "quoted" & more',
            "owner": "acme",
            "nexo_pkg_spec": "nexo-pkg==0.1.0",
        },
    ],
    ids=["defaults", "every-option"],
)
def test_every_template_renders_without_a_placeholder_left(
    kind: str, lang: str, options: dict[str, str]
) -> None:
    rendered = render(NewProject("weather_app", lang=lang, kind=kind, **options))  # type: ignore[arg-type]
    assert rendered
    left = {
        path: sorted(set(_PLACEHOLDER.findall(path + "\n" + text)))
        for path, text in rendered.items()
        if _PLACEHOLDER.search(path + "\n" + text)
    }
    assert left == {}


@pytest.mark.parametrize("kind", ["plugin", "microapp"])
def test_the_readme_trust_entry_matches_the_release_workflow_only(
    tmp_path: Path, kind: str
) -> None:
    """The README's `trusted_keys.toml` entry is a policy entry that lints clean, and its
    pattern matches the identity the scaffolded release workflow signs with, with every dot
    literal (as `nexo plugin trust add` writes it): `githubXcom` is no GitHub."""
    created = create_project(NewProject("demo", dest=tmp_path / "demo", owner="acme", kind=kind))
    readme = (created.path / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("```toml\n", 1)[1].split("```", 1)[0]
    policy = tmp_path / "trusted_keys.toml"
    policy.write_text('schema_version = "1.0"\n' + snippet, encoding="utf-8")
    assert lint_file(policy).diagnostics == ()
    pattern = re.compile(tomllib.loads(snippet)["authors"][0]["identity_regexp"])
    genuine = (
        "https://github.com/acme/nexo-plugin-demo/.github/workflows/release.yml@refs/tags/v1.0.0"
    )
    assert pattern.fullmatch(genuine)
    assert not pattern.fullmatch(genuine.replace("github.com", "githubXcom", 1))


@pytest.mark.parametrize("kind", ["plugin", "microapp"])
@pytest.mark.parametrize("description", ["red \x1b[31mtext", "a\x00b", "bell\x07", "del\x7f"])
def test_a_description_holding_a_control_character_is_refused_and_nothing_written(
    tmp_path: Path, kind: str, description: str
) -> None:
    """The project must lint clean (NX191 warns about it), and the README would carry an
    escape sequence raw to whoever cats it."""
    dest = tmp_path / "out"
    error = _error(NewProject("demo", kind=kind, dest=dest, description=description))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert "control character" in error.message
    assert "\x1b" not in error.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["plugin", "microapp"])
@pytest.mark.parametrize("description", ["two\nlines", "trailing\n", "a\u2028b", "a\u2029b"])
def test_a_description_holding_a_line_break_is_refused_and_nothing_written(
    tmp_path: Path, kind: str, description: str
) -> None:
    """The description is one line: the manifest's one-line string and the README's line
    under the title. A line feed used to pass (escaped as \\u000a in the manifest, two lines
    in the README) while a carriage return was refused."""
    dest = tmp_path / "out"
    error = _error(NewProject("demo", kind=kind, dest=dest, description=description))
    assert (error.kind, error.exit_code) == ("usage", 2)
    assert "line break" in error.message
    assert "\n" not in error.message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["plugin", "microapp"])
def test_a_description_with_a_tab_stays_one_line_and_lints_clean(tmp_path: Path, kind: str) -> None:
    """A tab breaks no line: kept, and the manifest it is written into parses and lints clean."""
    dest = tmp_path / "out"
    create_project(NewProject("demo", kind=kind, dest=dest, description="a\tb"))
    manifest = dest / "plugin.toml"
    assert lint_file(manifest).diagnostics == ()
    table = tomllib.loads(manifest.read_text("utf-8"))
    assert table["plugin"]["description"] == "a\tb"


@pytest.mark.parametrize(
    ("directory", "file"),
    [("tests/test_handshake.py", None), ("README.md", None), (None, "src"), (None, "bin")],
)
def test_force_into_a_tree_in_the_way_is_refused_before_anything_is_written(
    tmp_path: Path, directory: str | None, file: str | None
) -> None:
    """A directory where a generated file goes (or a file where a generated directory goes)
    used to stop --force halfway, the project half written."""
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n")
    if directory is not None:
        (dest / directory / "inside").mkdir(parents=True)
    if file is not None:
        (dest / file).write_text("in the way\n")
    before = sorted(str(path.relative_to(dest)) for path in dest.rglob("*"))
    error = _error(NewProject("demo", dest=dest, force=True))
    assert (error.kind, error.exit_code) == ("destination_exists", 2)
    assert str(dest / (directory or file or "")) in error.message
    assert sorted(str(path.relative_to(dest)) for path in dest.rglob("*")) == before
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


@pytest.mark.parametrize("link", ["src", ".github", ".github/workflows", "tests"])
@pytest.mark.parametrize("points_to", ["outside_directory", "file", "nothing", "itself"])
def test_force_over_a_link_where_a_generated_directory_goes_is_refused(
    tmp_path: Path, link: str, points_to: str
) -> None:
    """`new --force` replaces generated files only. A symbolic link where one of their
    directories goes was followed: a link to a directory got the generated files written
    outside the destination, a link to a file or to nothing stopped the moves halfway
    ("cannot write out: File exists", the project half written). Now: refused, one line
    naming the link, before anything is written."""
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = {
        "outside_directory": outside,
        "file": victim,
        "nothing": tmp_path / "nowhere",
        "itself": tmp_path / "out" / link,  # a loop
    }[points_to]
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine\n")
    (dest / link).parent.mkdir(parents=True, exist_ok=True)
    (dest / link).symlink_to(target)
    before = sorted(str(path.relative_to(dest)) for path in dest.rglob("*"))
    completed = nexo("plugin", "new", "demo", "--dest", "out", "--force", cwd=tmp_path)
    assert completed.code == 2, completed.stderr
    assert completed.stderr.splitlines()[-1] == (
        f"error: {Path('out', link)} is a symbolic link where a generated directory goes; "
        "--force replaces generated files only: move it away [destination_exists]"
    )
    assert sorted(str(path.relative_to(dest)) for path in dest.rglob("*")) == before
    assert (dest / link).readlink() == target
    assert list(outside.iterdir()) == []
    assert victim.read_text() == "precious\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["outside", "victim.txt", "out"]
    )


@pytest.mark.parametrize("dest", ["loop", "loop/demo", "in/loop/demo"])
@pytest.mark.parametrize("force", [False, True])
def test_a_destination_through_a_link_loop_is_refused(
    tmp_path: Path, dest: str, force: bool
) -> None:
    """A --dest that leads through a symbolic link that loops: one line naming the link, exit
    2, nothing written (it was an `unexpected RuntimeError`, Python's own "Symlink loop")."""
    (tmp_path / "in").mkdir()
    for where in (tmp_path / "loop", tmp_path / "in" / "loop"):
        where.symlink_to(where.name)
    completed = nexo(
        "plugin", "new", "demo", "--dest", dest, *(["--force"] if force else []), cwd=tmp_path
    )
    assert completed.code == 2, completed.stderr
    assert TRACEBACK not in completed.stderr
    link = tmp_path / dest.removesuffix("/demo")
    assert completed.stderr.splitlines()[-1] == (
        f"error: {dest} leads through {link}, a symbolic link that loops; remove it or "
        "choose another --dest [destination_exists]"
    )
    assert sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*")) == [
        "in", "in/loop", "loop",
    ]  # fmt: skip


def test_force_replaces_a_link_where_a_generated_file_goes_not_its_target(
    tmp_path: Path,
) -> None:
    """A link standing where a generated file goes is itself replaced by the file; what it
    pointed at outside the destination is left as it was."""
    victim = tmp_path / "victim.md"
    victim.write_text("precious\n")
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "README.md").symlink_to(victim)
    completed = nexo("plugin", "new", "demo", "--dest", "out", "--force", cwd=tmp_path)
    assert completed.code == 0, completed.stderr
    assert not (dest / "README.md").is_symlink()
    assert (dest / "README.md").read_text(encoding="utf-8").startswith("# demo")
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("below", [("demo",), ("deeper", "demo")])
def test_a_file_where_a_parent_directory_goes_is_named(
    tmp_path: Path, below: tuple[str, ...]
) -> None:
    """`new --dest notes.txt/demo`: the one line says which path is a file, not mkdir's bare
    "File exists" or "Not a directory"; nothing is written."""
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    completed = nexo("plugin", "new", "demo", "--dest", Path("notes.txt", *below), cwd=tmp_path)
    assert completed.code == 1, completed.stderr
    assert completed.stderr.splitlines()[-1] == (
        f"error: cannot create {Path('notes.txt', *below)}: {blocker} is a file, not a directory "
        "[io]"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert blocker.read_text() == "mine\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_crlf_checkout_of_the_project_keeps_lf_line_ends(tmp_path: Path, kind: str) -> None:
    """Git for Windows checks text out with ``\\r\\n`` (``core.autocrlf=true``); the project's
    ``.gitattributes`` keeps ``\\n``, so pack ships the bytes a Linux checkout has and
    ``bin/ID``'s ``#!`` line runs."""
    project = tmp_path / "demo"
    create_project(NewProject("demo", dest=project, kind=kind, nexo_pkg_spec="nexo-pkg==1.0"))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *command], cwd=project, env=env, check=True, capture_output=True)
    checkout = tmp_path / "windows"
    subprocess.run(
        ["git", "-c", "core.autocrlf=true", "clone", "-q", str(project), str(checkout)],
        env=env,
        check=True,
        capture_output=True,
    )
    written = sorted(p.relative_to(project) for p in project.rglob("*") if p.is_file())
    for relative in written:
        if relative.parts[0] != ".git":
            assert b"\r" not in (checkout / relative).read_bytes(), relative
            assert (checkout / relative).read_bytes() == (project / relative).read_bytes()


@pytest.mark.parametrize("kind", ["plugin", "microapp"])
def test_what_new_accepts_lints_clean_at_every_daemon_release(tmp_path: Path, kind: str) -> None:
    """`new` has one id limit, the oldest daemon's (32 characters, tool names included; 28
    for a microapp, whose tool the model sees as `ext_<id>_<tool>`), and no --nexo-version:
    lint keeps the 64-character limit at every --nexo-version and warns (NX109) of ids over
    32, so the longest id `new` takes lints clean at each release the daemon table knows, and
    the one past it is refused before anything is written."""
    from nexo_pkg.manifest.daemon import DAEMON_RELEASES, PORTABLE_ID_MAX_LENGTH

    # `<id>_h`, its example tool, fits 32; a microapp's tool reaches the model as
    # `ext_<id>_<id>_he`, within 64 (tests/scaffold/test_scaffold_microapp_long_ids.py).
    longest = "p" * (PORTABLE_ID_MAX_LENGTH - 2 if kind == "plugin" else 28)
    dest = tmp_path / "longest"
    created = nexo("plugin", "new", longest, "--kind", kind, "--dest", dest, "-q",
                   "--nexo-pkg-spec", "nexo-pkg==0.1.0", cwd=tmp_path)  # fmt: skip
    assert created.code == 0, created.stderr
    for release in DAEMON_RELEASES:
        linted = nexo("plugin", "lint", dest, "--nexo-version", release.version,
                      "--format", "json", cwd=tmp_path, in_process=True)  # fmt: skip
        summary = json.loads(linted.stdout)["summary"]
        assert (linted.code, summary["errors"], summary["warnings"]) == (0, 0, 0), release.version
    refused = nexo("plugin", "new", "p" * (PORTABLE_ID_MAX_LENGTH + 1), "--kind", kind,
                   "--dest", tmp_path / "longer", "--json", cwd=tmp_path)  # fmt: skip
    assert (refused.code, json.loads(refused.stdout)["kind"]) == (2, "usage")
    assert not (tmp_path / "longer").exists()
