#!/usr/bin/env python3
"""Feasibility check for a backtracking BPE encoder (the design of GitHub's `bpe` crate, rust-gems) under
Hugging Face's merge semantics, on the real GPT-2 / Llama-3 files: is it exact, and does it do less work per
byte than the merge loop of src/tokenizer/bpe_merge.cpp?

The encoder: at each position take the longest reachable token that prefixes the rest of the piece; keep it
if the pair (previous token, it) is valid, else try the next shorter prefix token; when none is valid, mark
the position dead and take back the previous token. Written here in Python only to prove the conditions and
count the work before anyone writes it in C++ (perf/RESULTS.md, "Tried and dropped").

When it is exact (the script checks the condition on the file and compares every document with HF's ids):
  (C) every merge (a, b) of rank r has r above the rank of every merge that produces a or b. Then HF's merge
      loop fires merges in non-decreasing rank order (a new pair always involves the token just made, so its
      rank is higher), and equal ranks are the same pair, fired leftmost first.
  Each token t that BPE rebuilds from its own bytes ("reachable") has a last merge split(t) = (a, b) of rank
  R(t); bytes are leaves (R = -1). Under C, two reachable tokens x | y stay [x, y] iff no merge across the
  boundary fires: walking back in time (undo whichever edge token was made later; on equal ranks the right
  one), the pair (left edge, right edge) with merge rank m fires iff m < (rank that replaces the left edge)
  and m <= (rank that replaces the right edge) (the left pair wins ties). A sequence whose adjacent pairs are
  all valid is then the BPE output: the first cross merge of the whole text would fire at a boundary whose
  two sides were undisturbed so far, which the pair check excludes. So the state at a position is BPE(prefix)
  whatever path reached it, and a dead position stays dead.
  GPT-2's merges satisfy C. Llama-3's tokenizer.json does not (it lists every split of a token at that
  token's tiktoken rank: 49,630 of 280,147 merges rank below a merge that makes one of their parts), and
  there pairwise validity does not pin the output: ' предупреждаване' has two all-valid sequences, HF's
  (... 'реж' 'дав' ...) and the greedy one (... 'режд' 'ав' ...).

Usage: python3 perf/tokenizer_backtrack_check.py --shared /work/shared --tokenizer llama3 FILE.jsonl ...
"""
import argparse
import json
import os

from tokenizers import Tokenizer

from tokenizer_peers import byte_alphabet, hf_gpt2

INF = 1 << 62


class NoPath(Exception):
    """Every path dead-ends: the pair check disagrees with the merge loop on this piece."""


class Model:
    def __init__(self, vocab, merges, ignore_merges):
        c2b = byte_alphabet()
        self.ignore_merges = ignore_merges
        self.bytes_of = {i: bytes(c2b[ch] for ch in tok) for tok, i in vocab.items()}
        self.id_of = {b: i for i, b in self.bytes_of.items()}
        self.byte_id = [vocab["".join(ch for ch, b in c2b.items() if b == x)] for x in range(256)]
        self.pair = {}
        produced_max = {}
        for r, (a, b) in enumerate(merges):
            ia, ib, it = vocab[a], vocab[b], vocab[a + b]
            self.pair[(ia, ib)] = (r, it)
            produced_max[it] = max(produced_max.get(it, -1), r)
        assert len(self.pair) == len(merges), "a pair listed twice (HF keeps one rank; not handled here)"
        self.c_violations = sum(r <= produced_max.get(vocab[a], -1) or r <= produced_max.get(vocab[b], -1)
                                for r, (a, b) in enumerate(merges))
        # Each token's last merge when BPE runs on its bytes alone (the merge loop itself, since without C the
        # order of merges is not the order of ranks); tokens it does not rebuild are unreachable.
        self.rank = {i: -1 for i in self.byte_id}
        self.split = {}
        for it, text in self.bytes_of.items():
            if len(text) > 1:
                last = self.merge_loop(text)
                if last is not None:
                    self.rank[it], self.split[it] = last
        self.reachable = {self.bytes_of[i]: i for i in self.rank}
        self.prefixes = {b[:k] for b in self.reachable for k in range(1, len(b) + 1)}
        self.max_len = max(len(b) for b in self.reachable)
        self.next_prefix = {}
        for b, i in self.reachable.items():
            self.next_prefix[i] = next((self.reachable[b[:k]] for k in range(len(b) - 1, 0, -1) if b[:k] in self.reachable),
                                       None)
        self.char_tokens = {}
        self.counts = dict(bytes=0, trie_steps=0, pair_lookups=0, tries=0, backtracks=0, whole=0, heap_lookups=0)

    def merge_loop(self, text):
        """HF's merge loop on bytes: (rank, (left, right)) of the merge that made the single token, or None."""
        syms, last = [self.byte_id[b] for b in text], None
        while len(syms) > 1:
            best = min(((self.pair[p][0], i) for i, p in enumerate(zip(syms, syms[1:])) if p in self.pair), default=None)
            if best is None:
                return None
            r, i = best
            last = (r, (syms[i], syms[i + 1]))
            syms[i:i + 2] = [self.pair[(syms[i], syms[i + 1])][1]]
        return last

    def valid(self, x, y):
        """True if BPE leaves the reachable tokens x, y as [x, y] when they stand side by side."""
        px = py = INF
        while True:
            self.counts["pair_lookups"] += 1
            m = self.pair.get((x, y))
            if m is not None and m[0] < px and m[0] <= py:
                return False
            rx, ry = self.rank[x], self.rank[y]
            if rx > ry:
                px, x = rx, self.split[x][1]
            elif ry >= 0:
                py, y = ry, self.split[y][0]
            else:
                return True

    def longest(self, text, pos):
        k = 0  # bytes a trie walk reads: until the text leaves the set of token prefixes
        while pos + k < len(text) and k < self.max_len and text[pos:pos + k + 1] in self.prefixes:
            k += 1
        self.counts["trie_steps"] += k
        while text[pos:pos + k] not in self.reachable:
            k -= 1
        return self.reachable[text[pos:pos + k]]

    def heap_lookups(self, text, n_out):
        """Pair lookups of the merge loop main uses (src/tokenizer/bpe_merge.cpp) on this piece, started from
        whole characters as char_symbols.hpp does where safe (counted as if always): n - 1 at the start and
        at most 2 after each of the n - n_out merges; no Bloom filter or memo counted."""
        n, pos = 0, 0
        while pos < len(text):
            length = 1 if text[pos] < 0xC0 else 2 if text[pos] < 0xE0 else 3 if text[pos] < 0xF0 else 4
            ch = text[pos:pos + length]
            if ch not in self.char_tokens:
                saved = dict(self.counts)
                self.char_tokens[ch] = len(self.encode(ch))
                self.counts = saved
            n += self.char_tokens[ch]
            pos += length
        return n - 1 + 2 * (n - n_out)

    def encode(self, text):
        self.counts["bytes"] += len(text)
        if self.ignore_merges and text in self.id_of:
            self.counts["whole"] += 1
            return [self.id_of[text]]
        n, out, pos, dead = len(text), [], 0, bytearray(len(text) + 1)
        tok = self.longest(text, 0)
        while pos < n:
            last = out[-1] if out else None
            while True:
                self.counts["tries"] += 1
                end = pos + len(self.bytes_of[tok])
                if not dead[end] and (last is None or self.valid(last, tok)):
                    out.append(tok)
                    pos = end
                    if pos < n:
                        tok = self.longest(text, pos)
                    break
                if self.next_prefix[tok] is not None:
                    tok = self.next_prefix[tok]
                    continue
                self.counts["backtracks"] += 1
                if last is None:
                    raise NoPath(text)
                dead[pos] = 1
                out.pop()
                pos -= len(self.bytes_of[last])
                tok = last
                break
        return out


def load(shared, name):
    tdir = os.path.join(shared, "data/tokenizers")
    if name == "gpt2":
        with open(os.path.join(tdir, "gpt2/encoder.json")) as f:
            vocab = json.load(f)
        with open(os.path.join(tdir, "gpt2/vocab.bpe")) as f:
            merges = [tuple(line.split()) for line in f.read().splitlines()[1:] if line]
        hf = hf_gpt2(tdir)
        return Model(vocab, merges, False), hf
    path = os.path.join(tdir, "llama3/tokenizer.json")
    with open(path) as f:
        model = json.load(f)["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return Model(model["vocab"], merges, model["ignore_merges"]), Tokenizer.from_file(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default="/work/shared")
    ap.add_argument("--tokenizer", choices=["gpt2", "llama3"], required=True)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    model, hf = load(args.shared, args.tokenizer)
    print(f"{args.tokenizer}: merges breaking condition C: {model.c_violations} of {len(model.pair)}; "
          f"{len(model.rank)} reachable tokens of {len(model.bytes_of)}")
    c2b = byte_alphabet()
    for path in args.files:
        for key in model.counts:
            model.counts[key] = 0
        mismatches = pieces = failed = 0
        first_failure = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                doc = json.loads(line)["text"]
                ours = []
                for piece, _ in hf.pre_tokenizer.pre_tokenize_str(doc):
                    pieces += 1
                    try:
                        ids = model.encode(bytes(c2b[ch] for ch in piece))
                        if len(ids) > 1 or len(piece) == 1 or not model.ignore_merges:
                            model.counts["heap_lookups"] += model.heap_lookups(bytes(c2b[ch] for ch in piece), len(ids))
                        ours += ids
                    except NoPath as e:
                        failed += 1
                        first_failure = first_failure or e.args[0]
                        ours = None
                        break
                mismatches += ours is not None and ours != hf.encode(doc, add_special_tokens=False).ids
        c = model.counts
        per = c["bytes"] or 1
        print(f"{os.path.basename(path)}: {pieces} pieces, {c['bytes']} bytes, documents differing from HF: "
              f"{mismatches}, pieces with no path: {failed}"
              f"{' (first: ' + repr(first_failure.decode(errors='replace')) + ')' if first_failure else ''}; per byte: trie steps {c['trie_steps'] / per:.2f}, pair lookups "
              f"{c['pair_lookups'] / per:.2f} (main's merge loop: {c['heap_lookups'] / per:.2f}), tries {c['tries'] / per:.2f}, backtracks {c['backtracks'] / per:.4f}; "
              f"whole-piece hits {c['whole']}", flush=True)


if __name__ == "__main__":
    main()
