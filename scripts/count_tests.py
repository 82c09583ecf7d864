#!/usr/bin/env python3
"""Counts test cases (not targets) from Bazel's JUnit XML files.

usage: count_tests.py TESTLOGS_DIR LABEL...   prints "passed failed skipped"
A target whose XML is missing or unreadable counts as one failed case.
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count(xml_path):
    passed = failed = skipped = 0
    root = ET.parse(xml_path).getroot()
    for case in root.iter("testcase"):
        status = case.get("status", "run")
        result = case.get("result", "completed")
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif (status == "notrun" or result in ("skipped", "suppressed")
              or case.find("skipped") is not None):
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main():
    logs = Path(sys.argv[1])
    totals = [0, 0, 0]
    for label in sys.argv[2:]:
        package, _, name = label.lstrip("/").partition(":")
        xml_path = logs / package / name / "test.xml"
        try:
            p, f, s = count(xml_path)
        except (OSError, ET.ParseError):
            p, f, s = 0, 1, 0
            print(f"count_tests: no results for {label}", file=sys.stderr)
        if p + f + s == 0:  # a target that ran no case at all
            f = 1
            print(f"count_tests: {label} ran no test case", file=sys.stderr)
        totals[0] += p
        totals[1] += f
        totals[2] += s
    print(*totals)


if __name__ == "__main__":
    main()
