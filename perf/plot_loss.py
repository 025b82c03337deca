#!/usr/bin/env python3
"""Plots the loss curve of one run from <run_dir>/metrics.jsonl into a PNG: training loss per step, the
held-out loss of each evaluation, and optionally a horizontal line (e.g. the corpus' unigram entropy).

Usage: python3 perf/plot_loss.py runs/tiny/metrics.jsonl docs/tiny-loss.png [--hline 6.04 "unigram entropy"]

metrics.jsonl holds one run (a new run moves an earlier run's file aside to metrics.<time>.jsonl). A file
written before that rule may hold several runs one after another: the step count starting again marks a
new run, and only the last run is plotted (the script says how many it left out).
Needs matplotlib: scripts/setup.sh installs Debian's python3-matplotlib.
"""
import argparse
import json
import os
import sys


def counted(n, noun):
    """'1 step', '2 steps'."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def last_run(path):
    """The (train, evals) points of the last run in the file, and how many earlier runs it holds."""
    runs = [([], [])]
    with open(path) as f:
        for number, line in enumerate(f, 1):
            try:
                m = json.loads(line)
            except json.JSONDecodeError:
                sys.exit(f"{path}:{number}: not a JSON line: {line.strip()[:80]}")
            if m.get("type") == "eval":
                runs[-1][1].append((m["step"], m["eval_loss"]))
                continue
            train = runs[-1][0]
            if train and m["step"] <= train[-1][0]:
                runs.append(([], []))  # the step count started again: a new run
            runs[-1][0].append((m["step"], m["loss"]))
    return runs[-1], len(runs) - 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("metrics")
    ap.add_argument("png")
    ap.add_argument("--hline", nargs=2, metavar=("VALUE", "LABEL"))
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    try:
        import matplotlib
    except ImportError:
        # Debian's python3-matplotlib is installed for the system Python; another python3 (pyenv, a venv)
        # first on PATH does not see it.
        system = "/usr/bin/python3"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
            os.execv(system, [system] + sys.argv)
        sys.exit("plot_loss.py needs matplotlib: run scripts/setup.sh (Debian package python3-matplotlib) "
                 "or pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (train, evals), earlier = last_run(a.metrics)
    if not train:
        sys.exit(f"{a.metrics}: no training steps to plot")
    if earlier:
        print(f"{a.metrics} holds {earlier + 1} runs; plotting the last one ({counted(len(train), 'step')})")
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
    print(f"wrote {a.png}: {counted(len(train), 'step')}, {counted(len(evals), 'evaluation')}")


if __name__ == "__main__":
    main()
