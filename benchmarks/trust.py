"""Time added by Sigstore verification to an install, import included (target: <= 1 s).

Each measurement runs in a fresh interpreter, as an install does: once verifying the real
public-good bundle in tests/fixtures/sigstore (import + trust root + verification), and once
doing the same work for an unsigned asset, so the difference is what signing costs.

    .venv/bin/python benchmarks/trust.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "sigstore"
ARTIFACT = "rfc8785-0.1.2-py3-none-any.whl"
IDENTITY = (
    "https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2"
)

CHILD = """
import json, sys, time
from pathlib import Path
start = time.perf_counter()
from nexo_pkg.install.trust import AuthorPolicy, TrustPolicy, verify_asset_signature
artifact = Path(sys.argv[1])
material = {name: Path(path) for name, path in json.loads(sys.argv[2]).items()}
author = AuthorPolicy(owner="trailofbits", identity=sys.argv[3])
policy = TrustPolicy(default="warn", authors=(author,))
outcome = verify_asset_signature(artifact, asset_name=artifact.name, material=material,
    owner="trailofbits", repo="rfc8785.py", policy=policy, mode="warn")
print(json.dumps({"seconds": time.perf_counter() - start, "status": outcome.status}))
"""


def _once(material: dict[str, str], cache: str) -> tuple[float, str]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(FIXTURES / ARTIFACT), json.dumps(material), IDENTITY],
        capture_output=True,
        text=True,
        check=True,
        env={"XDG_CACHE_HOME": cache, "PATH": "/usr/bin:/bin"},
    )
    document = json.loads(result.stdout)
    return float(document["seconds"]), str(document["status"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    bundle = FIXTURES / f"{ARTIFACT}.sigstore.json"
    with tempfile.TemporaryDirectory() as cache:
        _once({bundle.name: str(bundle)}, cache)  # warm the OS file cache and .pyc files
        signed, unsigned = [], []
        started = time.perf_counter()
        for _ in range(args.runs):
            seconds, status = _once({bundle.name: str(bundle)}, cache)
            assert status == "verified", status
            signed.append(seconds)
            seconds, status = _once({}, cache)
            assert status == "unsigned", status
            unsigned.append(seconds)
        wall = time.perf_counter() - started
    added = statistics.median(signed) - statistics.median(unsigned)
    print(f"runs: {args.runs} (wall {wall:.1f} s)")
    print(f"signed asset   (import + verify): median {statistics.median(signed):.3f} s")
    print(f"unsigned asset (no Sigstore)     : median {statistics.median(unsigned):.3f} s")
    verdict = "OK" if added <= 1.0 else "OVER TARGET"
    print(f"added by verification: {added:.3f} s (target <= 1.000 s) {verdict}")


if __name__ == "__main__":
    main()
