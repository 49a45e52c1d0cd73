"""Time added by Sigstore verification to an install, import included (target: <= 1 s).

Each measurement runs in a fresh interpreter, as an install does: once verifying the real
public-good bundle of ../shared/fixtures/sigstore (import + trust root + verification), and once
doing the same work for an unsigned asset, so the difference is what signing costs.

    .venv/bin/python benchmarks/trust.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
from nexo_pkg.trust.entry import AuthorPolicy, TrustPolicy, verify_asset_signature
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
        env={"XDG_CACHE_HOME": cache, "PATH": "/usr/bin:/bin"},
    )
    document = json.loads(result.stdout)
    return float(document["seconds"]), float(document["cpu"]), str(document["status"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
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
    verdict = "OK" if added <= 1.0 else "OVER TARGET"
    print(
        f"added by verification: {added:.3f} s elapsed, {added_cpu:.3f} s CPU "
        f"(target <= 1.000 s elapsed) {verdict}"
    )


if __name__ == "__main__":
    main()
