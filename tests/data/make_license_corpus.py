#!/usr/bin/env python3
"""Regenerates tests/data/corpus/: a small real-text corpus (Debian's /usr/share/common-licenses, one document
per paragraph) in every input format the loader reads. Committed, so the tests never need this script."""
import gzip, json, pathlib, subprocess

SRC = pathlib.Path("/usr/share/common-licenses")
OUT = pathlib.Path(__file__).parent / "corpus"


def paragraphs(name):
    text = (SRC / name).read_text(encoding="utf-8")
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def jsonl(docs):
    return "".join(json.dumps({"text": d, "id": i}, ensure_ascii=False) + "\n" for i, d in enumerate(docs))


OUT.mkdir(exist_ok=True)
(OUT / "gpl-3.jsonl").write_text(jsonl(paragraphs("GPL-3")), encoding="utf-8")
(OUT / "lgpl-2.1.jsonl").write_text(jsonl(paragraphs("LGPL-2.1")), encoding="utf-8")
(OUT / "apache-2.0.jsonl.gz").write_bytes(gzip.compress(jsonl(paragraphs("Apache-2.0")).encode(), mtime=0))
(OUT / "mpl-2.0.jsonl").write_text(jsonl(paragraphs("MPL-2.0")), encoding="utf-8")
subprocess.run(["zstd", "-q", "-f", "--rm", str(OUT / "mpl-2.0.jsonl"), "-o", str(OUT / "mpl-2.0.jsonl.zst")], check=True)
(OUT / "text").mkdir(exist_ok=True)
for name in ["BSD", "Artistic", "CC0-1.0"]:
    (OUT / "text" / (name.lower() + ".txt")).write_text((SRC / name).read_text(encoding="utf-8"), encoding="utf-8")
