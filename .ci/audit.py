"""pip-audit, reported honestly: how many installed packages were actually audited.

pip-audit prints "No known vulnerabilities found" even when it could audit nothing (every
package "not found on PyPI", as on a machine that reaches the package index but not PyPI's
vulnerability API). This runs it with JSON output and says what was and was not checked.

Exit 1 when a vulnerability is found; 0 otherwise, with a warning when packages could not be
audited (a network that blocks the vulnerability service is not a failure of this code).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def main() -> int:
    exe = Path(sys.executable).with_name("pip-audit")
    done = subprocess.run(
        [str(exe), "--skip-editable", "--progress-spinner", "off", "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        deps = json.loads(done.stdout)["dependencies"]
    except (ValueError, KeyError):
        print(f"pip-audit: no report (exit {done.returncode}): {done.stderr.strip()[-500:]}")
        return 1
    editable = [d for d in deps if "editable" in d.get("skip_reason", "")]
    skipped = [d for d in deps if "skip_reason" in d and d not in editable]
    audited = [d for d in deps if "skip_reason" not in d]
    vulnerable = [d for d in audited if d.get("vulns")]
    total = len(deps) - len(editable)
    for d in vulnerable:
        ids = ", ".join(v["id"] for v in d["vulns"])
        print(f"pip-audit: {d['name']} {d['version']}: {ids}")
    if skipped:
        names = ", ".join(d["name"] for d in skipped[:8])
        more = f" and {len(skipped) - 8} more" if len(skipped) > 8 else ""
        print(
            f"pip-audit: warning: {len(skipped)} of {total} packages could not be audited "
            f"(the vulnerability service did not answer for them: {names}{more}); they are "
            "NOT known to be free of vulnerabilities"
        )
    if not audited:
        print(f"pip-audit: 0 of {total} packages audited: no vulnerability result at all")
    else:
        found = f"{len(vulnerable)} with known vulnerabilities" if vulnerable else "none vulnerable"
        print(f"pip-audit: {len(audited)} of {total} packages audited, {found}")
    return 1 if vulnerable else 0


if __name__ == "__main__":
    sys.exit(main())
