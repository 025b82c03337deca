#!/usr/bin/env python3
"""Summarises a trace written by `fsdp_bench --trace PATH` (rank 0, the timed steps): per unit, the median
compute span in forward and in backward, the median all-gather span, and where compute waited for a
gather; then, per pass, where its wall time went: forward (embedding to the head's end) and the rest
(backward, the last reductions, the optimizer step), the compute inside each, the waits by kind (the
pass's first block, the other gathers, reductions during backward, the drain after the last block) and the
time the link carried nothing. Used to choose the benchmark model (per-unit compute against the unit's
gather time, both measured at K = 1, where nothing overlaps) and to find what the window leaves exposed
(perf/RESULTS.md, FSDP).

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


def idle_ms(spans, begin, end):
    """Milliseconds of [begin, end) (microseconds) covered by none of `spans`."""
    idle, t = 0.0, begin
    for s, f in sorted(spans):
        if f <= t:
            continue
        if s > t:
            idle += min(s, end) - t
        t = max(t, f)
        if t >= end:
            break
    return (idle + max(0.0, end - t)) / 1000.0


def account(path):
    events = sorted((e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"), key=lambda e: e["ts"])
    compute = [e for e in events if e["tid"] == 1]
    starts = [e["ts"] for e in compute if e["name"] == "embedding"]
    links = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["tid"] == 2]
    print(f"# {path}: per pass, ms: forward | rest (backward, drain, optimizer) | waits | link idle")
    for p, begin in enumerate(starts):
        # The pass runs to the next pass's first gather wait or compute (the optimizer step's end).
        end = starts[p + 1] if p + 1 < len(starts) else max(e["ts"] + e["dur"] for e in compute)
        if p + 1 < len(starts):
            end = min([e["ts"] for e in compute if begin < e["ts"] <= end and e["name"].startswith("wait: all_gather")
                       and e["ts"] > max(x["ts"] + x["dur"] for x in compute if x["name"] == "block.0" and x["ts"] < end)]
                      + [end])
        inside = [e for e in compute if begin <= e["ts"] < end]
        head = next(e["ts"] + e["dur"] for e in inside if e["name"] == "head")
        last = max(e["ts"] + e["dur"] for e in inside if not e["name"].startswith("wait"))
        work = lambda a, b: sum(e["dur"] for e in inside if a <= e["ts"] < b and not e["name"].startswith("wait")) / 1000
        wait = lambda a, b, kind: sum(e["dur"] for e in inside if a <= e["ts"] < b and e["name"].startswith("wait: " + kind)) / 1000
        first = next((e for e in inside if e["name"].startswith("wait: all_gather block.0")), None)
        first_ms = first["dur"] / 1000 if first and first["ts"] < head else 0.0
        print(f"pass {p}: forward {(head - begin) / 1000:.0f} (compute {work(begin, head):.0f}, first block {first_ms:.0f}, "
              f"other gathers {wait(begin, head, 'all_gather') - first_ms:.0f}) | "
              f"backward {(last - head) / 1000:.0f} (compute {work(head, last):.0f}, gathers {wait(head, last, 'all_gather'):.0f}, "
              f"reductions {wait(head, last, 'reductions'):.0f}), drain {wait(last, end, 'reductions'):.0f}, "
              f"after {(end - last) / 1000 - wait(last, end, 'reductions'):.0f} | link idle forward {idle_ms(links, begin, head):.0f}, "
              f"backward {idle_ms(links, head, last):.0f}")


for trace in sys.argv[1:]:
    summarise(trace)
    account(trace)
