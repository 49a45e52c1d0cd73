"""The benchmark and fuzzing scripts the docs tell people to run can be run as written.

``benchmarks/`` and ``fuzz/`` are outside the type-checked package, so nothing else notices
when a rename in ``nexo_pkg`` breaks them: every script answers ``--help``, every command line
the README and docs/ show names a script that exists and only options it has, and the Sigstore
benchmark (whose child process imports the trust entry points) runs once with one run.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from support.shared_fixtures import require_shared_fixture

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = REPO / "benchmarks"
MAIN = 'if __name__ == "__main__":'
SCRIPTS = sorted(p for p in BENCHMARKS.glob("*.py") if MAIN in p.read_text(encoding="utf-8"))
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# ``benchmarks/NAME.py`` and what follows it on its line (and on ``\``-continued lines).
COMMAND = re.compile(r"benchmarks/([A-Za-z_]+)\.py((?:[ \t]+(?:\\\n[ \t]*)?[^ \t\n`\"'()]+)*)")
# A path a page names: a script, a harness, a seed directory, a test (with ``::its_name``).
REPO_PATH = re.compile(
    r"\b((?:benchmarks|fuzz|tests)/[A-Za-z0-9_./-]*[A-Za-z0-9_])(?:::([A-Za-z_][A-Za-z0-9_]*))?"
)
# A scaffolded project's own files (``tests/test_handshake.py``) are named by the pages too.
TEMPLATES = sorted((REPO / "nexo_pkg" / "scaffold" / "templates").iterdir())


def _run(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
    )


def _help(script: str) -> str:
    completed = _run(BENCHMARKS / f"{script}.py", "--help")
    assert completed.returncode == 0, completed.stderr[-2000:]
    return completed.stdout


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_every_benchmark_script_answers_help(script: Path) -> None:
    completed = _run(script, "--help")
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert completed.stdout.startswith("usage: "), completed.stdout
    assert "Traceback" not in completed.stderr


def test_documented_benchmark_commands_name_scripts_and_options_that_exist() -> None:
    helps: dict[str, str] = {}
    wrong: list[str] = []
    commands = 0
    for page in [*PAGES, *SCRIPTS]:
        for match in COMMAND.finditer(page.read_text(encoding="utf-8")):
            script, rest = match.groups()
            commands += 1
            if not (BENCHMARKS / f"{script}.py").is_file():
                wrong.append(f"{page.name}: benchmarks/{script}.py does not exist")
                continue
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
                if script not in helps:
                    helps[script] = _help(script)
                if not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", helps[script]):
                    wrong.append(f"{page.name}: benchmarks/{script}.py has no {option}")
    assert commands > 20  # the pattern still finds the documented commands
    assert wrong == []


def _named(path: str) -> Path | None:
    """The file or directory ``path`` names: in the repository, else in a scaffold template."""
    for base in (REPO, *TEMPLATES):
        if (base / path).exists():
            return base / path
    return None


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_paths_and_tests_named_in_the_docs_exist(page: Path) -> None:
    wrong: set[str] = set()
    for path, name in REPO_PATH.findall(page.read_text(encoding="utf-8")):
        # fuzz/corpus is working data the docs tell you to create.
        if path.startswith("fuzz/corpus"):
            continue
        found = _named(path)
        if found is None:
            wrong.add(f"{path} does not exist")
        elif name and not re.search(
            rf"^\s*(?:async )?(?:def|class) {name}\b|^{name}\b", found.read_text("utf-8"), re.M
        ):
            wrong.add(f"{path} defines no {name}")
    assert sorted(wrong) == []


def test_run_all_refuses_an_unknown_area_before_writing(tmp_path: Path) -> None:
    out = tmp_path / "benchmarks.md"
    completed = _run(BENCHMARKS / "run_all.py", "--only", "lint,lnit", "--out", out)
    assert completed.returncode == 2, completed.stderr[-2000:]
    assert "unknown lnit" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not out.exists()


def test_the_sigstore_benchmark_runs() -> None:
    require_shared_fixture("sigstore", "rfc8785-0.1.2-py3-none-any.whl.sigstore.json")
    completed = _run(BENCHMARKS / "trust.py", "--runs", "1", timeout=240)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "added by verification:" in completed.stdout


def _load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported under a private name, as ``run_all.py`` does."""
    spec = importlib.util.spec_from_file_location(f"test_bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _WarmUpFirst:
    """``wall_and_rss`` that runs nothing: the first call of each program (the warm-up run,
    which compiles bytecode) reports a peak far above the others."""

    WARM_UP_PEAK = 10**12

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(
        self, command: list[str], *, env: dict[str, str] | None = None
    ) -> tuple[float, int]:
        del env
        if "--dest" in command:  # the install variant removes the root it installed into
            Path(command[command.index("--dest") + 1]).mkdir(parents=True)
        program = command[0] if command[0] != sys.executable else " ".join(command[:3])
        first = program not in self.seen
        self.seen.add(program)
        return 0.01, self.WARM_UP_PEAK if first else 20 * 2**20


def test_install_and_pack_peaks_leave_out_the_warm_up_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """docs/benchmarks.md gives the peak RSS over the measured runs; the warm-up run, whose
    time is discarded, compiles every module into a fresh bytecode cache (several MiB more)."""
    install = _load_benchmark("install")
    monkeypatch.setattr(install, "wall_and_rss", _WarmUpFirst())
    (result,) = install.measure(["tiny"], 2)
    assert result.rss == {"nexo": 20 * 2**20, "baseline": 20 * 2**20}
    pack = _load_benchmark("pack")
    monkeypatch.setattr(pack, "wall_and_rss", _WarmUpFirst())
    _, pack_peak, tar_peak = pack._measure_shape(tmp_path, "tiny", 2)
    assert (pack_peak, tar_peak) == (20 * 2**20, 20 * 2**20)


# A child process running this checkout's nexo-pkg: ``python -m nexo_pkg``, a ``nexo`` console
# script beside the interpreter, or one pip wrote for a wheel.
_STARTS_NEXO = re.compile(r'"-m", "nexo_pkg"|BIN / "nexo"|console_script\(')


def _compiles_first(script: Path) -> bool:
    """Whether ``main()`` compiles nexo-pkg's modules (``precompile``) before it measures, or
    the script gives its children a bytecode cache of their own (``PYTHONPYCACHEPREFIX``)."""
    text = script.read_text(encoding="utf-8")
    if "PYTHONPYCACHEPREFIX" in text:
        return True
    tree = ast.parse(text)
    main = next(
        node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "main"
    )
    return any(
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "precompile"
        for node in ast.walk(main)
    )


def test_scripts_that_time_nexo_processes_compile_its_modules_first() -> None:
    """An installed nexo-pkg runs from ``.pyc`` files. A checkout has none until something
    writes them, and under ``PYTHONDONTWRITEBYTECODE`` (set on many machines and images) no
    run does: every cold ``nexo`` process would compile each module it imports (1.5 s of CPU
    for a ``check``), and a start-up figure would be mostly compilation."""
    starting = [script for script in SCRIPTS if _STARTS_NEXO.search(script.read_text("utf-8"))]
    assert {"startup", "check", "install", "pack"} <= {script.stem for script in starting}
    assert [script.stem for script in starting if not _compiles_first(script)] == []
