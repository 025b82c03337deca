#!/usr/bin/env python3
"""Regenerates train.jsonl / eval.jsonl from Debian's bible-kjv-text package (apt-get install bible-kjv).

One JSON Lines record {"text": ...} per chapter (verse references stripped, one verse per line). Every
20th chapter (0, 20, 40, ...) goes to eval.jsonl, the held-out set; the rest to train.jsonl. The output is
committed, so neither the build nor the tests need the package. Run: python3 inputs/data/kjv/make_kjv.py
"""
import json
import pathlib
import re
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
VERSE = re.compile(r"^([1-3]?[A-Za-z]+)(\d+):(\d+) (.*)$")


def main():
    raw = subprocess.run(["bible", "-f", "-l", "100000", "gen1:1-rev22:21"], check=True, capture_output=True,
                         text=True).stdout
    chapters, key = [], None
    for line in raw.splitlines():
        m = VERSE.match(line)
        if not m:
            continue
        if (m.group(1), m.group(2)) != key:
            key = (m.group(1), m.group(2))
            chapters.append([])
        chapters[-1].append(m.group(4).strip())
    with open(HERE / "train.jsonl", "w") as train, open(HERE / "eval.jsonl", "w") as held_out:
        for i, verses in enumerate(chapters):
            (held_out if i % 20 == 0 else train).write(json.dumps({"text": "\n".join(verses) + "\n"}) + "\n")
    print(f"{len(chapters)} chapters")


if __name__ == "__main__":
    main()
