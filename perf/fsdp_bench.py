#!/usr/bin/env python3
"""Summarises a trace written by `fsdp_bench --trace PATH` (rank 0, the timed steps): per unit, the median
compute span in forward and in backward, the median all-gather span, and where compute waited for a
gather. Used to choose the benchmark model (per-unit compute against the unit's gather time, both measured
at K = 1, where nothing overlaps) and to find what the window leaves exposed (perf/RESULTS.md, FSDP).

Usage: perf/fsdp_bench.py TRACE.json [more traces ...]
"""
import collections
import json
import statistics
import sys


def summarise(path):
    events = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    events.sort(key=lambda e: e["ts"])
    uses = collections.defaultdict(lambda: ([], []))  # unit -> (forward spans, backward spans) in ms
    gathers = collections.defaultdict(lambda: ([], []))  # unit -> (forward, backward) all-gather spans
    waits = collections.defaultdict(list)
    seen = collections.Counter()  # uses of each unit in the current pass
    for e in events:
        name, ms = e["name"], e["dur"] / 1000.0
        if e["tid"] == 1 and name.startswith("wait: all_gather "):
            waits[name.split()[-1]].append(ms)
        elif e["tid"] == 1 and not name.startswith("wait"):
            uses[name][1 if seen[name] else 0].append(ms)
            seen[name] += 1
        elif e["tid"] == 2 and name.startswith("all_gather "):
            unit = name.split()[-1]
            if unit == "embedding":  # a new pass begins
                seen.clear()
            # A gather issued after the unit's forward use (or during it, for the next use) is backward's.
            gathers[unit][1 if seen[unit] else 0].append(ms)
    passes = max(1, len(uses.get("embedding", ([], []))[0]))
    med = lambda v: statistics.median(v) if v else 0.0
    print(f"# {path}: {passes} passes; milliseconds, medians over passes (waits: total per pass)")
    print(f"{'unit':<12} {'forward':>8} {'backward':>9} {'gather f':>9} {'gather b':>9} {'gathers':>8} {'wait/pass':>10}")
    for unit in sorted(uses, key=lambda u: (u != "embedding", u == "head", u)):
        fwd, bwd = uses[unit]
        gf, gb = gathers[unit]
        print(f"{unit:<12} {med(fwd):8.1f} {med(bwd):9.1f} {med(gf):9.1f} {med(gb):9.1f} "
              f"{(len(gf) + len(gb)) / passes:8.1f} {sum(waits[unit]) / passes:10.1f}")


for trace in sys.argv[1:]:
    summarise(trace)
