#!/usr/bin/env python3
"""Plots the loss curve of a run from <run_dir>/metrics.jsonl into a PNG: training loss per step, the
held-out loss of each evaluation, and optionally a horizontal line (e.g. the corpus' unigram entropy).

Usage: python3 perf/plot_loss.py runs/tiny/metrics.jsonl docs/tiny-loss.png [--hline 6.04 "unigram entropy"]
Needs matplotlib (pip install matplotlib); nothing in the build or tests does.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    ap.add_argument("png")
    ap.add_argument("--hline", nargs=2, metavar=("VALUE", "LABEL"))
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    train, evals = [], []
    with open(a.metrics) as f:
        for line in f:
            m = json.loads(line)
            if m.get("type") == "eval":
                evals.append((m["step"], m["eval_loss"]))
            else:
                train.append((m["step"], m["loss"]))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(*zip(*train), label="train loss", linewidth=1)
    if evals:
        ax.plot(*zip(*evals), "o-", label="held-out loss")
    if a.hline:
        ax.axhline(float(a.hline[0]), color="gray", linestyle="--", label=a.hline[1])
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy (nats/token)")
    ax.set_title(a.title or a.metrics)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)
    print(f"wrote {a.png}: {len(train)} steps, {len(evals)} evaluations")


if __name__ == "__main__":
    main()
