#!/usr/bin/env python3
"""Prints the slowest tests of a ctest run beside their limits, so that a test drifting
towards its limit is seen before it fails on a slower machine (every limit should be at
least 3x the test's duration; docs/TESTING.md). Informational: never fails the run.
    scripts/slowest_tests.py JUNIT.xml BUILD_DIR [COUNT]"""

import json
import subprocess
import sys
import xml.etree.ElementTree as ET


def limits(build_dir: str) -> dict[str, float]:
    shown = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"],
                           capture_output=True, text=True, check=True)
    out = {}
    for test in json.loads(shown.stdout).get("tests", []):
        for prop in test.get("properties", []):
            if prop.get("name") == "TIMEOUT":
                out[test["name"]] = float(prop["value"])
    return out


def main() -> int:
    junit, build_dir = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    cases = [(float(c.get("time", 0)), c.get("name", "?"))
             for c in ET.parse(junit).getroot().iter("testcase")]
    cases.sort(reverse=True)
    limit = limits(build_dir)
    print(f"slowest {min(count, len(cases))} of {len(cases)} tests (duration, limit, limit/duration):")
    for seconds, name in cases[:count]:
        cap = limit.get(name)
        ratio = f"{cap / seconds:5.1f}x" if cap and seconds > 0 else "    -"
        mark = "  <- under 3x: raise its limit or lighten it" if cap and cap < 3 * seconds else ""
        print(f"  {seconds:7.1f} s  {cap or 0:6.0f} s  {ratio}  {name}{mark}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
