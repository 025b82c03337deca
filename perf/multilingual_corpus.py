#!/usr/bin/env python3
"""Builds the multilingual tokenizer benchmark corpus from the translations installed on this machine.

The gettext catalogues under /usr/share/locale/*/LC_MESSAGES/*.mo hold the user-interface strings of every
installed program in some hundred and fifty languages: short strings (menu items, messages, sentences), which
is the hard case for a tokenizer's per-call overhead and its pre-token cache. Each catalogue's translations
(msgstr, plural forms split) are grouped by the writing system of their language and written as one JSON
Lines file per script, one document per catalogue, capped at --max-bytes per script (catalogues taken in
sorted order, so the corpus is reproducible on one machine). Reads the .mo format directly (the same data as
`msgunfmt`), so it needs nothing but Python.

    python3 perf/multilingual_corpus.py --out /tmp/multilingual [--max-bytes 1000000]
"""
import argparse
import glob
import json
import os
import struct

# Writing system -> locale directories (language codes as installed under /usr/share/locale).
SCRIPTS = {
    "latin-ext": ["cs", "pl", "tr", "vi", "hu", "ro", "lt", "lv", "hr", "sk", "sl", "et", "is"],
    "cyrillic": ["ru", "uk", "bg", "sr", "be", "mk", "kk", "ky", "mn"],
    "greek": ["el"],
    "armenian": ["hy"],
    "georgian": ["ka"],
    "hebrew": ["he", "yi"],
    "arabic": ["ar", "fa", "ur", "ug", "ckb", "ps"],
    "devanagari": ["hi", "mr", "ne"],
    "bengali": ["bn", "bn_IN", "as"],
    "gurmukhi": ["pa"],
    "gujarati": ["gu"],
    "oriya": ["or"],
    "tamil": ["ta"],
    "telugu": ["te"],
    "kannada": ["kn"],
    "malayalam": ["ml"],
    "sinhala": ["si"],
    "thai": ["th"],
    "lao": ["lo"],
    "khmer": ["km"],
    "myanmar": ["my"],
    "tibetan": ["bo", "dz"],
    "ethiopic": ["am", "ti"],
    "hangul": ["ko"],
    "han-simplified": ["zh_CN"],
    "han-traditional": ["zh_TW", "zh_HK"],
    "japanese": ["ja"],
}


def translations(path):
    """The translated strings of one .mo file (plural forms split), header entry skipped."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 28:
        return []
    magic = struct.unpack("<I", data[:4])[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        return []
    _, count, originals, translated = struct.unpack(order + "4I", data[4:20])
    out = []
    for i in range(count):
        olen, _ = struct.unpack(order + "2I", data[originals + 8 * i:originals + 8 * i + 8])
        tlen, toff = struct.unpack(order + "2I", data[translated + 8 * i:translated + 8 * i + 8])
        if olen == 0:  # the header (metadata), not text
            continue
        for text in data[toff:toff + tlen].split(b"\0"):
            try:
                s = text.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if s.strip():
                out.append(s)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--locale-dir", default="/usr/share/locale")
    ap.add_argument("--max-bytes", type=int, default=1_000_000)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for script, languages in SCRIPTS.items():
        size, docs = 0, 0
        with open(os.path.join(args.out, script + ".jsonl"), "w", encoding="utf-8") as out:
            for path in sorted(p for lang in languages
                               for p in glob.glob(os.path.join(args.locale_dir, lang, "LC_MESSAGES", "*.mo"))):
                strings = translations(path)
                if not strings or size >= args.max_bytes:
                    continue
                text = "\n".join(strings) + "\n"
                out.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
                size += len(text.encode("utf-8"))
                docs += 1
        print(f"{script:16} {docs:4d} catalogues {size:9d} bytes")


if __name__ == "__main__":
    main()
