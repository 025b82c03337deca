#!/usr/bin/env python3
"""The device tests (ctest label gpu) as the device check runs them without ctest: one line per test,
tab-separated: name, time limit in seconds, program (a file of the build's bin/), arguments.

Usage: ctest --test-dir BUILD -L gpu --show-only=json-v1 > tests.json
       python3 perf/gpu/gpu_tests.py tests.json BUILD/bin > gpu_tests.tsv
A test whose program is not in BIN_DIR (a script, a command of another tree) is refused: the bundle carries
only bin/'s programs.
"""
import json
import os
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        tests = json.load(f).get("tests", [])
    bin_dir = os.path.realpath(sys.argv[2])
    for test in tests:
        properties = {p["name"]: p["value"] for p in test.get("properties", [])}
        command = test.get("command") or []
        if not command or os.path.dirname(os.path.realpath(command[0])) != bin_dir:
            sys.exit(f"gpu test {test['name']}: its command {command} is not a program of {bin_dir}")
        if any("\t" in part or "\n" in part for part in command):
            sys.exit(f"gpu test {test['name']}: an argument holds a tab or newline")
        timeout = int(float(properties.get("TIMEOUT", 300)))
        print("\t".join([test["name"], str(timeout), os.path.basename(command[0]), *command[1:]]))


if __name__ == "__main__":
    main()
