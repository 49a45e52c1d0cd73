"""Inputs that used to end in a Python traceback: each is now one line with its kind (SPEC §1).

Unreadable files and directories are tested with the capabilities that bypass permissions
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``) dropped, since the suite may run as root.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from support.cli import CliResult, clean_env, nexo
from support.registry import PASSWORD, USER, start_registry
from support.registry_proxy import RegistryProxy
from support.stderr import without_notes
from support.tarballs import write_plugin
from support.token_server import TokenServer

DROP_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search")
# Far above what lint needs, far below what reading /dev/zero without end takes.
ADDRESS_SPACE = 768 * 1024 * 1024


def _one_line_error(result: CliResult) -> None:
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr


def _unprivileged(
    args: Sequence[str], cwd: Path, *, stdin: int | None = None, limit: bool = False
) -> subprocess.CompletedProcess[str]:
    """``nexo ARGS`` without the capabilities that bypass file permissions (and, with
    ``limit``, under an address-space limit)."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to drop CAP_DAC_OVERRIDE")

    def limited() -> None:
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    return subprocess.run(
        [*DROP_DAC, sys.executable, "-m", "nexo_pkg", *args],
        env=clean_env(NEXO_HOME=str(cwd / "home")), cwd=cwd, stdin=stdin, capture_output=True,
        text=True, timeout=60, check=False, preexec_fn=limited,
    )  # fmt: skip


@pytest.mark.parametrize("host", ["[1::2::3]", "[::::]"])
def test_a_malformed_ipv6_registry_host_is_source_invalid(tmp_path: Path, host: str) -> None:
    reference = f"oci://{host}/plugins/echo:1.0.0"
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    installed = nexo(
        "plugin", "install", reference, "--dest", str(tmp_path / "root"), "--yes", "--json",
        env=env, cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert installed.exit_code == 2, installed.stderr
    assert installed.document["kind"] == "source_invalid"
    _one_line_error(installed)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{reference}"\n')
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--json", env=env, cwd=tmp_path, in_process=True
    )
    assert locked.exit_code == 2, locked.stderr
    assert "Traceback" not in locked.stderr
    assert not (tmp_path / "nexo-plugins.lock").exists()
    assert not (tmp_path / "root").exists()


# A label "xn--" begins must be Punycode the IDNA codec decodes; the HTTP client decodes it
# before it connects.
NOT_IDNA = ["xn--zz", "xn--", "XN--zz", "xn--a.xn--b"]


@pytest.mark.parametrize("host", NOT_IDNA)
def test_a_registry_host_that_is_no_idna_name_is_source_invalid(tmp_path: Path, host: str) -> None:
    reference = f"oci://{host}/plugins/echo:1.0.0"
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    dist = tmp_path / "dist"
    write_plugin(dist, "echo", "1.0.0")
    before = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*"))
    for args in (
        ["install", reference, "--dest", str(tmp_path / "root"), "--yes"],
        ["info", reference],
        ["push", str(dist), reference],
        ["mirror", reference, "oci://127.0.0.1:9/plugins/echo", "--plain-http"],
    ):
        result = nexo("plugin", *args, "--json", env=env, cwd=tmp_path, in_process=True)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.document["kind"] == "source_invalid", result.stderr
        _one_line_error(result)
    wanted = tmp_path / "nexo-plugins.toml"
    wanted.write_text(f'[plugins.echo]\nsource = "{reference}"\n')
    locked = nexo(
        "plugin", "lock", "-f", str(wanted), "--json", env=env, cwd=tmp_path, in_process=True
    )
    assert locked.exit_code == 2, locked.stderr
    assert locked.document["kind"] == "wanted_invalid", locked.stderr
    _one_line_error(locked)
    wanted.unlink()
    assert sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("host", NOT_IDNA)
def test_a_github_api_url_whose_host_is_no_idna_name_is_one_line(tmp_path: Path, host: str) -> None:
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    result = nexo(
        "plugin", "install", "acme/echo", "--github-api-url", f"https://{host}/",
        "--dest", str(tmp_path / "root"), "--yes", "--json", env=env, cwd=tmp_path,
        in_process=True,
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    assert result.document["kind"] == "network", result.stderr
    _one_line_error(result)
    assert not (tmp_path / "root").exists()


@pytest.mark.parametrize("host", NOT_IDNA)
def test_a_tag_list_page_on_a_host_that_is_no_idna_name_is_registry_invalid(
    tmp_path: Path, host: str
) -> None:
    """The real registry behind a loopback proxy whose tag list continues (``Link``) at
    such a host."""
    running = start_registry(tmp_path / "registry")
    proxy = RegistryProxy(running.host).start()
    try:
        env = clean_env(NEXO_HOME=str(tmp_path / "home"), DOCKER_CONFIG=str(tmp_path / "no-docker"))
        dist = tmp_path / "dist"
        write_plugin(dist, "echo", "1.0.0")
        pushed = nexo(
            "plugin", "push", str(dist), proxy.ref("plugins/echo"), "--plain-http", env=env,
            cwd=tmp_path, in_process=True,
        )  # fmt: skip
        assert pushed.exit_code == 0, pushed.stderr
        proxy.link = f'<http://{host}/v2/plugins/echo/tags/list?n=1&last=1.0.0>; rel="next"'
        result = nexo(
            "plugin", "install", proxy.ref("plugins/echo"), "--plain-http",
            "--dest", str(tmp_path / "root"), "--yes", "--json", env=env, cwd=tmp_path,
            in_process=True,
        )  # fmt: skip
    finally:
        proxy.stop()
        running.stop()
    assert result.exit_code == 1, result.stderr
    assert result.document["kind"] == "registry_invalid", result.stderr
    _one_line_error(result)
    assert not (tmp_path / "root").exists()


def test_a_bearer_realm_that_is_not_a_url_is_registry_auth(tmp_path: Path) -> None:
    """The real registry, configured with the realm ``http://[::1``, challenges with it."""
    (tmp_path / "token").mkdir()
    service = TokenServer(USER, PASSWORD, tmp_path / "token")
    service.realm = "http://[::1"
    service.start()
    running = start_registry(tmp_path / "registry", token=service)
    try:
        env = clean_env(NEXO_HOME=str(tmp_path / "home"), DOCKER_CONFIG=str(tmp_path / "no-docker"))
        result = nexo(
            "plugin", "install", running.ref("plugins/echo:1.0.0"), "--plain-http",
            "--dest", str(tmp_path / "root"), "--yes", "--json", env=env, cwd=tmp_path,
            in_process=True,
        )  # fmt: skip
    finally:
        running.stop()
        service.stop()
    assert result.exit_code == 1, result.stderr
    assert result.document["kind"] == "registry_auth"
    _one_line_error(result)


@pytest.mark.parametrize("name", [".nexo.toml", "pyproject.toml"])
def test_a_lint_config_nested_past_the_parser_is_config_invalid(tmp_path: Path, name: str) -> None:
    """Found up the tree from the linted directory."""
    nested = "[" * 100_000 + "]" * 100_000
    text = f"select = {nested}\n"
    if name == "pyproject.toml":
        text = f"[tool.nexo.lint]\n{text}"
    (tmp_path / name).write_text(text)
    plugin = tmp_path / "plugins" / "hello"
    plugin.mkdir(parents=True)
    (plugin / "nexo-plugin.toml").write_text('[plugin]\nid = "hello"\nversion = "1.0.0"\n')
    env = clean_env(NEXO_HOME=str(plugin / "home"))
    result = nexo("plugin", "lint", "--format", "json", ".", env=env, cwd=plugin, in_process=True)
    assert result.exit_code == 2, result.stderr
    assert "nested too deeply" in result.stderr
    _one_line_error(result)


def test_lint_of_a_tree_with_an_unreadable_directory_says_no_traceback(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "hello").mkdir(parents=True)
    (tree / "hello" / "nexo-plugin.toml").write_text('[plugin]\nid = "hello"\nversion = "1.0.0"\n')
    locked = tree / "locked"
    locked.mkdir()
    locked.chmod(0)
    (tmp_path / ".nexo.toml").write_text('exclude = ["locked"]\n')
    try:
        for config in ("with the directory excluded", "without"):
            result = _unprivileged(["plugin", "lint", "tree"], tmp_path)
            assert "Traceback" not in result.stderr, (config, result.stderr[-2000:])
            assert result.returncode in {0, 1}, result.stderr
            (tmp_path / ".nexo.toml").unlink(missing_ok=True)
    finally:
        locked.chmod(0o755)


def test_check_of_an_unreadable_installed_plugin_is_target_invalid(tmp_path: Path) -> None:
    tarball = write_plugin(tmp_path / "dist", "hello", "1.0.0")
    root = tmp_path / "root"
    (tmp_path / "no-config").mkdir()  # an empty daemon configuration directory
    installed = nexo(
        "plugin", "install", str(tarball), "--dest", str(root), "--yes",
        "--config", str(tmp_path / "no-config"),
        env=clean_env(NEXO_HOME=str(tmp_path / "home")), cwd=tmp_path, in_process=True,
    )  # fmt: skip
    assert installed.exit_code == 0, installed.stderr
    (root / "hello-1.0.0").chmod(0)
    try:
        result = _unprivileged(
            ["plugin", "check", "hello", "--dest", str(root), "--json"], tmp_path
        )
    finally:
        (root / "hello-1.0.0").chmod(0o755)
    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout)["kind"] == "target_invalid"
    assert "Traceback" not in result.stderr
    assert len(without_notes(result.stderr).strip().splitlines()) == 1, result.stderr


def test_lint_reads_at_most_one_byte_past_the_cap_from_anything(tmp_path: Path) -> None:
    """``/dev/zero`` by name is not a regular file (NX008, unreadable); from standard input it
    is read up to the 1 MiB cap plus one byte and reported as NX004; both under a memory
    limit that reading without end would blow."""
    named = _unprivileged(["plugin", "lint", "/dev/zero"], tmp_path, limit=True)
    assert named.returncode == 1, named.stderr
    assert "NX008" in named.stdout
    assert "not a regular file" in named.stdout
    assert "Traceback" not in named.stderr
    with Path("/dev/zero").open("rb") as zero:
        piped = _unprivileged(
            ["plugin", "lint", "--format", "json", "-"], tmp_path, stdin=zero.fileno(),
            limit=True,
        )  # fmt: skip
    assert piped.returncode == 1, piped.stderr
    assert "NX004" in piped.stdout
    assert "Traceback" not in piped.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["plugin", "schema"],
        ["plugin", "rule", "NX001"],
        ["plugin", "cache", "dir"],
        ["plugin", "cache", "size"],
        ["plugin", "lint", "plugin.toml"],
    ],
    ids=["schema", "rule", "cache-dir", "cache-size", "lint"],
)
def test_output_a_full_disk_refuses_is_one_io_line(tmp_path: Path, args: list[str]) -> None:
    """Stdout on a full disk (``>/dev/full``): one ``[io]`` line and exit 1, even when the
    output was still buffered as the command returned; never Python's "Exception ignored"
    message at exit with its code 120."""
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    (tmp_path / "plugin.toml").write_text('[plugin]\nid = "weather"\n', encoding="utf-8")
    env = clean_env(NEXO_HOME=str(tmp_path / "home"))
    env.pop("PYTHONUNBUFFERED", None)  # buffered, as a user's shell runs it
    with Path("/dev/full").open("w", encoding="utf-8") as full:
        result = subprocess.run(
            [sys.executable, "-m", "nexo_pkg", *args],
            env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=full,
            stderr=subprocess.PIPE, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "Exception ignored" not in result.stderr, result.stderr
    lines = without_notes(result.stderr).strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    assert lines[0].endswith(" [io]"), result.stderr
