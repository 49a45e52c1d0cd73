"""The mutation score of the last ``mutmut run`` ([tool.mutmut] in pyproject.toml).

Reads ``mutmut results --all true``; the mutants listed in tests/trust/equivalent_mutants.txt
(each with why no test can tell it from the original) are left out of the count. Prints every
other surviving mutant and exits 1 when fewer than 90 % of the counted ones were killed.

    .venv/bin/mutmut run && .venv/bin/python scripts/mutation_score.py [--floor 90]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "tests" / "trust" / "equivalent_mutants.txt"


def equivalent_mutants() -> set[str]:
    """The names in :data:`EQUIVALENT` (``name  # why`` a line, ``#`` lines are comments)."""
    names: set[str] = set()
    for line in EQUIVALENT.read_text(encoding="utf-8").splitlines():
        name = line.partition("#")[0].strip()
        if name:
            names.add(name)
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", type=float, default=90.0, help="minimum score, in percent")
    args = parser.parse_args()
    mutmut = shutil.which("mutmut", path=str(Path(sys.executable).parent)) or "mutmut"
    listing = subprocess.run(
        [mutmut, "results", "--all", "true"], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    statuses = {
        name.strip(): status.strip()
        for name, _, status in (line.rpartition(":") for line in listing.splitlines())
        if name.strip()
    }
    equivalent = equivalent_mutants()
    stale = sorted(equivalent - statuses.keys())
    counted = {name: status for name, status in statuses.items() if name not in equivalent}
    tally = Counter(counted.values())
    judged = sum(n for status, n in tally.items() if status not in {"skipped", "not checked"})
    killed = tally["killed"] + tally["timeout"]
    score = 100.0 * killed / judged if judged else 0.0
    for name, status in sorted(counted.items()):
        if status not in {"killed", "timeout"}:
            print(f"{status}: {name}")
    for name in stale:
        print(f"listed as equivalent but not generated any more: {name}")
    print(
        f"{killed} of {judged} mutants killed ({score:.1f} %), {len(equivalent) - len(stale)} "
        f"equivalent ones not counted; floor {args.floor:.0f} %"
    )
    return 0 if score >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
