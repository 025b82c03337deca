#!/usr/bin/env python3
"""Unigram entropy (nats/token) of a JSON Lines corpus under a GPT-2-style tokenizer: the loss of a model
that knows only token frequencies. A language model that learned anything beyond that is below it.

Usage: python3 perf/unigram_entropy.py inputs/data/kjv/train.jsonl [inputs/tokenizers/gpt2]
Needs `tokenizers` (pip install tokenizers); nothing in the build or tests does.
"""
import collections
import json
import math
import sys

from tokenizers import ByteLevelBPETokenizer


def main():
    corpus = sys.argv[1]
    tok_dir = sys.argv[2] if len(sys.argv) > 2 else "inputs/tokenizers/gpt2"
    tok = ByteLevelBPETokenizer(f"{tok_dir}/encoder.json", f"{tok_dir}/vocab.bpe")
    counts = collections.Counter()
    with open(corpus) as f:
        for line in f:
            counts.update(tok.encode(json.loads(line)["text"]).ids)
    n = sum(counts.values())
    h = -sum(c / n * math.log(c / n) for c in counts.values())
    print(f"{corpus}: {n} tokens, {len(counts)} distinct, unigram entropy {h:.3f} nats ({h / math.log(2):.3f} bits)")


if __name__ == "__main__":
    main()
