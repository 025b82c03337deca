#!/usr/bin/env python3
"""The scaling study's analysis (perf/scaling/README.md): fits the link parameters of the schedule-derived
step-time model (stepmodel.py) to half of run.sh's measurements, reports its error on the held-out rest,
finds where FSDP and the replicated run swap places as the bandwidth changes, and projects weak-scaling
efficiency to 8, 64 and 512 GPUs for the 7B and 11B presets on A100- and H100-class compute over 100 Gbit/s
Ethernet and 4 x 200 Gbit/s InfiniBand.

Usage: perf/scaling/analyze.py [results.csv] [--plots DIR] [--check LATER_CSV]   (numpy and matplotlib; not a
build dependency)

Per point the model takes the work of the run (its step less every wait for communication: compute and
optimizer, an input, because the machine's load changes it) and the loopback run's optimizer time; it
splits forward and backward over the units by their matmul flops (backward twice forward) and simulates the
schedule on the link. Fitted on the fit half: eta (the share of the shaped rate TCP reaches), C (what one
core's TCP path moves, bytes/s per direction; a link of rate B runs at 1 / (1 / (eta B) + 1 / C), loopback
at C) and the latency before each step of a collective: three parameters.

The model is the schedule of the code since SCHEDULE_SINCE; points measured before it (libnbc's all-reduce
and reduce-scatter, gathers in parallel on the wire) are refused with a message naming the change.
"""
import argparse
import csv
import math
import os
import sys
import tomllib

import numpy as np

import stepmodel

HERE = os.path.dirname(os.path.abspath(__file__))
SEQ_BENCH, VOCAB_BENCH = 128, 512
# run.sh's models: d_model, d_ff, blocks (8 / 4 heads, untied, fsdp_bench's defaults).
SHAPES = {"m3": (256, 768, 4), "m13": (512, 1536, 4), "m13r8": (512, 1536, 4)}
# The ring all-reduce (commit 35a8caa) completed the current schedule: ring reduce-scatter and all-reduce,
# one gather on the wire at a time, reductions held behind gathers (8578a9c, 18:08 UTC the same day).
SCHEDULE_SINCE = "2026-11-23T20:00:37Z"
CONFIGS = (("replicated", 2, "fp32"), ("fsdp", 1, "fp32"), ("fsdp", 2, "fp32"), ("fsdp", 2, "bf16"),
           ("fsdp", 4, "fp32"))


def units(d, ff, layers, vocab, heads, kv_heads, seq):
    """Parameters and forward flops per token of each unit in forward order (embedding, blocks, head)."""
    kv = d // heads * kv_heads
    block_matmul = d * (d + 2 * kv) + d * d + 3 * d * ff
    params = [vocab * d] + [block_matmul + 2 * d] * layers + [vocab * d + d]
    flops = [0.0] + [2 * block_matmul + 2 * d * seq] * layers + [2 * vocab * d]  # ModelConfig::train_flops / 3
    return params, flops


def load(path, reference=()):
    """The points of a CSV; `reference`: rows whose loopback runs stand in where this CSV has none."""
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r["step_s"]:
                continue  # a point that failed to print its line
            if r["time"] < SCHEDULE_SINCE:
                sys.exit(f"analyze.py: {path}, {r['time']}: measured before {SCHEDULE_SINCE} under the former "
                         "schedule (libnbc's all-reduce and reduce-scatter, gathers sharing the wire); its model is "
                         "stepmodel.py at commit 4514931 (perf/scaling/README.md, History)")
            for field in ("rate_gbit", "step_s", "compute_s", "gather_wait_s", "waits_s", "gather_mb", "reduce_mb",
                          "params"):
                r[field] = float(r[field])
            r["k"] = int(r["k"])
            d, ff, layers = SHAPES[r["model"]]
            r["units"], r["flops"] = units(d, ff, layers, VOCAB_BENCH, 8, 4, SEQ_BENCH)
            if sum(r["units"]) != r["params"]:
                sys.exit(f"analyze.py: {r['model']} has {r['params']:.0f} parameters in {path}, the shape here "
                         f"{sum(r['units'])}")
            check_bytes(r, path)
            rows.append(r)
    # The optimizer (and what else follows backward) from each configuration's loopback run, where nothing
    # waits: step less forward+backward.
    loop = {key(r): max(0.0, r["step_s"] - r["compute_s"]) for r in list(reference) + rows if r["link"] == "loopback"}
    for r in rows:
        r["optimizer"] = min(loop.get(key(r), 0.0), work(r))
    return rows


def check_bytes(r, path):
    """The schedule must move the bytes the run counted (comm.*_bytes: ring-counted, at two ranks one unit's
    bytes per gather or reduce-scatter, twice that per all-reduce), or it is not the schedule that ran."""
    width = 2 if r["comm"] == "bf16" else 4
    n = len(r["units"])
    gathered = 0 if r["strategy"] == "replicated" else sum(r["units"][u] for u in stepmodel.gathered_per_step(r["k"], n))
    reduced = sum(r["units"]) * (2 if r["strategy"] == "replicated" else 1)
    for name, model, measured in (("gather", gathered, r["gather_mb"]), ("reduce", reduced, r["reduce_mb"])):
        if abs(model * width / 1e6 - measured) > 0.01:
            sys.exit(f"analyze.py: {path}, {r['time']}: {r['model']} {r['strategy']} K {r['k']} {r['comm']} counted "
                     f"{measured} MB of {name}s, the schedule here {model * width / 1e6:.3f} MB (an older window?)")


def key(r):
    return r["model"], r["strategy"], r["k"], r["comm"]


def work(r):
    return r["step_s"] - r["waits_s"]


def link_rate(p, rate_gbit):
    """Bytes per second in each direction: eta of the shaped rate, in series with the one-core ceiling C."""
    eta, cpu, _ = p
    return cpu if rate_gbit <= 0 else 1.0 / (1.0 / (eta * rate_gbit * 1e9 / 8) + 1.0 / cpu)


def burst(p, rate_gbit):
    """What each direction's tbf bucket passes at once, in payload bytes: perf/netns/netns.sh gives it 4 ms of
    the rate or 256 KiB, whichever is larger (loopback has none)."""
    return 0.0 if rate_gbit <= 0 else p[0] * max(262144, rate_gbit * 1e9 / 8 / 250)


def simulate(p, rate_gbit, strategy, k, comm, params, flops, fb, optimizer):
    """Step seconds for forward+backward seconds fb spread over the units by flops."""
    share = np.array(flops) / sum(flops) * fb / 3
    width = 2 if comm == "bf16" else 4
    return stepmodel.step_time(strategy, k, params, width, share, 2 * share, optimizer, link_rate(p, rate_gbit),
                               p[2], burst(p, rate_gbit))


def predict(p, r):
    return simulate(p, r["rate_gbit"], r["strategy"], r["k"], r["comm"], r["units"], r["flops"],
                    work(r) - r["optimizer"], r["optimizer"])


def nelder_mead(f, x0, iterations=600):
    """Minimises f from x0 (numpy has no optimiser and scipy is not installed here)."""
    n = len(x0)
    simplex = [np.array(x0, float)] + [np.array(x0, float) + np.eye(n)[i] * 0.5 for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = np.argsort(values)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        centre = np.mean(simplex[:-1], axis=0)
        reflected = centre + (centre - simplex[-1])
        fr = f(reflected)
        if fr < values[0]:
            expanded = centre + 2 * (centre - simplex[-1])
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = centre + 0.5 * (simplex[-1] - centre)
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                simplex = [simplex[0] + 0.5 * (s - simplex[0]) for s in simplex]
                values = [f(s) for s in simplex]
    return simplex[int(np.argmin(values))]


def unpack(x):
    """Unconstrained search variables -> (eta in (0, 1), C in bytes/s, latency in seconds)."""
    return (1 / (1 + math.exp(-x[0])), math.exp(x[1]) * 1e8, math.exp(x[2]) * 1e-3)


def fit(rows):
    def loss(x):
        p = unpack(x)
        return sum((predict(p, r) / r["step_s"] - 1) ** 2 for r in rows)
    return unpack(nelder_mead(loss, [1.5, 1.0, 1.0]))


# --- FSDP against replicated -----------------------------------------------------------------------------------

def loopback_compute(rows, model, kind):
    """(forward+backward, optimizer) of a configuration from its loopback run: the model's compute with the
    least communication in it."""
    r = next((r for r in rows if r["model"] == model and r["link"] == "loopback" and key(r)[1:] == kind), None)
    return None if r is None else (work(r) - r["optimizer"], r["optimizer"], r)


def curve(p, rows, model, kind, rates):
    got = loopback_compute(rows, model, kind)
    if got is None:
        return None
    fb, opt, r = got
    return [simulate(p, b, kind[0], kind[1], kind[2], r["units"], r["flops"], fb, opt) for b in rates]


def crossovers(p, rows, model, kind, rates):
    """Bandwidths where fsdp `kind` and replicated swap places (each with its loopback compute), with the one
    faster just below."""
    a, b = curve(p, rows, model, kind, rates), curve(p, rows, model, CONFIGS[0], rates)
    if a is None or b is None:
        return None
    diff = np.array(a) - np.array(b)
    return [(float(math.sqrt(rates[i] * rates[i + 1])), "fsdp" if diff[i] < 0 else "replicated")
            for i in range(len(rates) - 1) if diff[i] * diff[i + 1] < 0]


# --- projection to GPU clusters -------------------------------------------------------------------------------

def preset(name):
    with open(os.path.join(HERE, "..", "..", "inputs", name), "rb") as f:
        m = tomllib.load(f)["model"]
    params, flops = units(m["d_model"], m["d_ff"], m["n_layers"], m["vocab_size"], m["n_heads"], m["n_kv_heads"],
                          SEQ)
    if m.get("tie_embeddings", True):
        sys.exit(f"analyze.py: {name} ties its embeddings; the projection's units assume an untied head")
    return params, flops


SEQ, SEQS_PER_GPU = 4096, 2  # one micro-batch of 2 sequences of 4096 tokens per GPU
# Dense bf16 peaks (A100 SXM 312 TFLOP/s, H100 SXM 989 TFLOP/s) at the model flop utilisation of the seeds'
# Granite 7B run: 4550 tokens/s per A100 (/work/shared/seeds/000_*).
GPUS = {"A100": 312e12, "H100": 989e12}
NETS = {"100G Ethernet": 100e9, "4x200G InfiniBand": 800e9}  # per node of 8 GPUs
NVLINK = 300e9  # bytes/s one direction per GPU (600 GB/s both ways, A100 and H100 NVLink)


def seed_mfu():
    _, flops = preset("llama-7b.toml")
    return 4550 * 3 * sum(flops) / GPUS["A100"]


def project(preset_name, gpu, net_bps, n_gpus, mfu, eta_net=0.8, seqs=SEQS_PER_GPU, strategy="fsdp", k=2, width=2,
            accum=1):
    """Weak scaling: each GPU keeps `seqs` sequences per micro-batch. fsdp: window K over all n_gpus, gathers
    and reduce-scatters of `width` bytes an element as NCCL rings (every node's network carries (N - 1) / N
    of each unit each way); inside one node NVLink. hsdp: shard groups of one node (8 GPUs: gathers and
    reduce-scatters on NVLink), each GPU's 1/8 chunk all-reduced across the N / 8 nodes, the 8 GPUs of a
    node sharing its network, once per step: with `accum` micro-batches the first accum - 1 stay inside the
    node (fsdp over 8 on NVLink) and the last carries the all-reduce. No latency, no CPU limit and no optimizer term (NCCL moves data without the
    host; AdamW on 1/N or 1/8 of the parameters is small beside compute). Returns (efficiency, step s,
    compute s, Gbit/s each node's network carries on average)."""
    params, flops = preset(preset_name)
    fwd = np.array(flops) * seqs * SEQ / (GPUS[gpu] * mfu)
    compute = 3 * fwd.sum()
    if strategy == "hsdp" and n_gpus > 8:
        net = eta_net * net_bps / 8 / 8  # bytes/s each way for each of the node's 8 GPUs
        last = stepmodel.step_time("hsdp", k, params, width, fwd, 2 * fwd, 0.0, net, 0.0, algorithm="nccl",
                                   ranks=n_gpus, group=8, group_rate=NVLINK)
        inside = stepmodel.step_time("fsdp", k, params, width, fwd, 2 * fwd, 0.0, NVLINK, 0.0, algorithm="nccl",
                                     ranks=8)
        step = (accum - 1) * inside + last
        replicas = n_gpus // 8
        moved = 8 * 2 * sum(params) / 8 * width * (replicas - 1) / replicas  # the node's 8 chunks' all-reduces
        return accum * compute / step, step, accum * compute, moved * 8 / step / 1e9
    rate = NVLINK if n_gpus <= 8 else eta_net * net_bps / 8
    step = stepmodel.step_time("fsdp", k, params, width, fwd, 2 * fwd, 0.0, rate, 0.0, algorithm="nccl", ranks=n_gpus)
    gathered = sum(params[u] for u in stepmodel.gathered_per_step(k, len(params)))
    moved = (gathered + sum(params)) * width * (n_gpus - 1) / n_gpus if n_gpus > 8 else 0.0
    return compute / step, step, compute, moved * 8 / step / 1e9


def settings_sweep(mfu, n_gpus=64, net_bps=100e9):
    """Which settings decide 11B's weak-scaling efficiency on 100 Gbit/s Ethernet at 64 A100s: strategy
    (fsdp over all GPUs, hsdp with the node as shard group), the wire type, the window K and the sequences
    of 4096 tokens per GPU and micro-batch, one micro-batch per step; then hsdp by train.grad_accum (its
    all-reduce across nodes runs once per step; fsdp's traffic is per micro-batch, so grad_accum does not
    change fsdp's ratio). Prints one row per setting, efficiency per sequence count."""
    seq_counts = (1, 2, 4, 8, 16)
    print(f"\n11B on {n_gpus} A100s, {net_bps / 1e9:.0f} Gbit/s Ethernet per node of 8 (80 % usable): projected "
          f"weak-scaling efficiency by setting and sequences of {SEQ} tokens per GPU per micro-batch")
    print("| strategy | wire | K | " + " | ".join(f"{s} x {SEQ}" for s in seq_counts) + " |")
    print("|---|---|---:|" + "---:|" * len(seq_counts))
    for strategy, label in (("fsdp", f"fsdp over {n_gpus}"), ("hsdp", "hsdp, node groups of 8")):
        for width, wire in ((4, "fp32"), (2, "bf16")):
            for k in (1, 2, 4):
                effs = [project("llama-11b.toml", "A100", net_bps, n_gpus, mfu, seqs=s, strategy=strategy, k=k,
                                width=width)[0] for s in seq_counts]
                print(f"| {label} | {wire} | {k} | " + " | ".join(f"{100 * e:.0f} %" for e in effs) + " |")
    accums = (1, 2, 4, 8)
    print(f"\nhsdp (node groups of 8, bf16, K = 2) by train.grad_accum: the all-reduce across nodes runs once per "
          f"step, in the last micro-batch")
    print("| tokens per GPU and micro-batch | " + " | ".join(f"grad_accum {a}" for a in accums) + " |")
    print("|---|" + "---:|" * len(accums))
    for s in (1, 2):
        effs = [project("llama-11b.toml", "A100", net_bps, n_gpus, mfu, seqs=s, strategy="hsdp", accum=a)[0]
                for a in accums]
        print(f"| {s} x {SEQ} | " + " | ".join(f"{100 * e:.0f} %" for e in effs) + " |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default=os.path.join(HERE, "frag", "results.csv"))
    ap.add_argument("--plots", default=HERE, help="directory for the PNG plots")
    ap.add_argument("--check", help="a later CSV whose every point the fitted model predicts (none is fitted)")
    args = ap.parse_args()
    rows = load(args.csv)
    if not rows:
        sys.exit(f"analyze.py: no measurements in {args.csv}")
    # Every second point in run order (link, model, strategy) is held out: each link and model is in both.
    for i, r in enumerate(rows):
        r["held_out"] = i % 2 == 1
    fitted = [r for r in rows if not r["held_out"]]
    held = [r for r in rows if r["held_out"]]
    p = fit(fitted)
    print(f"fitted on {len(fitted)} points, held out {len(held)} (every second point in run order)")
    ceiling = p[1] * 8 / 1e9
    print(f"parameters (3): eta {p[0]:.3f}, C " + (f"{ceiling:.2f} Gbit/s per direction" if ceiling < 1000 else
                                                  "> 1000 Gbit/s (no one-core ceiling binds)")
          + f", latency {1e3 * p[2]:.2f} ms per collective step")
    for r in rows:
        r["pred"] = predict(p, r)
        r["err"] = 100 * (r["pred"] / r["step_s"] - 1)
    print("\n| held out | link | model | strategy | K | comm | work s | measured s | model s | error |")
    print("|---|---|---|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {'yes' if r['held_out'] else 'no'} | {r['link']} | {r['model']} | {r['strategy']} | {r['k']} | "
              f"{r['comm']} | {work(r):.3f} | {r['step_s']:.3f} | {r['pred']:.3f} | {r['err']:+.1f} % |")
    print(f"\nmax fit error: {max(abs(r['err']) for r in fitted):.1f} %")
    if held:
        within = sum(abs(r["err"]) <= 15 for r in held)
        print(f"held out within 15 %: {within} of {len(held)}")
        print(f"max model error: {max(abs(r['err']) for r in held):.1f} %")
    # The same parameters with the loopback run's compute in place of each point's work: a prediction from
    # loopback alone (it also carries what the link's traffic costs the CPU, which loopback does not show).
    if args.check:
        check = load(args.check, rows)
        print(f"\ncheck: every point of {os.path.relpath(args.check)} predicted with the parameters above")
        print("| link | model | strategy | K | comm | work s | measured s | model s | error |")
        print("|---|---|---|---|---|---:|---:|---:|---:|")
        for r in check:
            r["err"] = 100 * (predict(p, r) / r["step_s"] - 1)
            print(f"| {r['link']} | {r['model']} | {r['strategy']} | {r['k']} | {r['comm']} | {work(r):.3f} | "
                  f"{r['step_s']:.3f} | {predict(p, r):.3f} | {r['err']:+.1f} % |")
        print(f"check points within 15 %: {sum(abs(r['err']) <= 15 for r in check)} of {len(check)}; "
              f"max error {max(abs(r['err']) for r in check):.1f} %")
    alone = []
    for r in held:
        fb, opt, _ = loopback_compute(rows, r["model"], key(r)[1:])
        alone.append(simulate(p, r["rate_gbit"], r["strategy"], r["k"], r["comm"], r["units"], r["flops"], fb, opt)
                     / r["step_s"] - 1)
    if alone:
        print(f"held out, with each configuration's loopback compute instead of the point's work: max error "
              f"{100 * max(abs(e) for e in alone):.1f} %, {sum(abs(e) <= 0.15 for e in alone)} of {len(alone)} "
              f"within 15 %")

    print("\nFSDP K = 2 (fp32) step rate at 1 Gbit/s as a share of loopback's, per model:")
    for model in sorted({r["model"] for r in rows}):
        pick = lambda link: [r for r in rows if r["model"] == model and r["link"] == link and key(r)[1:] == CONFIGS[2]]
        one, loop = pick("1gbit"), pick("loopback")
        if one and loop:
            print(f"  {model}: {100 * loop[0]['step_s'] / one[0]['step_s']:.0f} % (work {work(loop[0]):.2f} s on "
                  f"loopback, {work(one[0]):.2f} s at 1 Gbit/s)")

    print("\nFSDP against replicated per bandwidth: measured step s (model s) / MB each rank sends+receives per step")
    print("| model | link | replicated | fsdp K2 fp32 | fsdp K2 bf16 | fastest measured | fastest by the model |")
    print("|---|---|---|---|---|---|---|")
    kinds, names = CONFIGS[:1] + CONFIGS[2:4], ["replicated", "fsdp fp32", "fsdp bf16"]
    agree = total = 0
    for model in sorted({r["model"] for r in rows}):
        for link in dict.fromkeys(r["link"] for r in rows):
            cells = [next((r for r in rows if r["model"] == model and r["link"] == link and key(r)[1:] == kind), None)
                     for kind in kinds]
            if None in cells:
                continue
            fastest = lambda field: names[min(range(3), key=lambda i: cells[i][field])]
            agree, total = agree + (fastest("step_s") == fastest("pred")), total + 1
            print(f"| {model} | {link} | " + " | ".join(
                f"{r['step_s']:.2f} ({r['pred']:.2f}) / {r['gather_mb'] + r['reduce_mb']:.0f}" for r in cells)
                + f" | {fastest('step_s')} | {fastest('pred')} |")
    print(f"same fastest at {agree} of {total} (model, link) pairs")
    rates = np.logspace(-2, 2, 161)
    for model in sorted({r["model"] for r in rows}):
        for kind in (CONFIGS[2], CONFIGS[3]):
            cross = crossovers(p, rows, model, kind, rates)
            if cross is not None:
                print(f"{model}, loopback compute: fsdp K2 {kind[2]} and replicated swap places at "
                      + (", ".join(f"{c:.2f} Gbit/s ({below} faster below)" for c, below in cross) if cross
                         else "no bandwidth in 0.01-100 Gbit/s"))

    mfu = seed_mfu()
    print(f"\nprojection (MFU {100 * mfu:.0f} % from the seeds' 4550 tokens/s per A100 on Granite 7B; "
          f"{SEQS_PER_GPU} x {SEQ} tokens per GPU per micro-batch; FSDP K = 2, bf16 on the wire, NCCL rings; "
          f"80 % of the nominal network rate):")
    projections = {}
    for name, preset_file in (("7B", "llama-7b.toml"), ("11B", "llama-11b.toml")):
        for gpu in GPUS:
            for net, bps in NETS.items():
                effs = [project(preset_file, gpu, bps, n, mfu) for n in (8, 64, 512)]
                projections[(name, gpu, net)] = effs
                print(f"  {name:>3} {gpu} {net:>18}: " + ", ".join(
                    f"{n} GPUs {100 * e[0]:.0f} % ({e[3]:.0f} Gbit/s)" for n, e in zip((8, 64, 512), effs)))
    seed = project("llama-11b.toml", "A100", 200e9, 1600, mfu, eta_net=120 / 200)
    print(f"  seeds: 11B on 200 x 8 A100 over 2 x 100 Gbit/s Ethernet (120 Gbit/s usable): model {100 * seed[0]:.0f} % "
          f"efficiency, {seed[3]:.0f} Gbit/s average per node (IBM measured a 32 Gbit/s peak)")
    seqs = next(s for s in range(1, 257) if project("llama-11b.toml", "A100", 32e9, 1600, mfu, 1.0, s)[0] >= 0.95)
    print(f"  at 32 Gbit/s per node the model needs >= {seqs} sequences of {SEQ} per A100 per micro-batch "
          f"for 95 % efficiency")
    settings_sweep(mfu)
    plot(rows, p, projections, args.plots)


def plot(rows, p, projections, out):
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 5))
    for label, sel, marker in (("fitted", lambda r: not r["held_out"], "o"), ("held out", lambda r: r["held_out"], "x")):
        pts = [r for r in rows if sel(r)]
        ax.scatter([r["step_s"] for r in pts], [r["pred"] for r in pts], marker=marker, label=label)
    low = min(min(r["step_s"], r["pred"]) for r in rows) * 0.9
    top = max(max(r["step_s"], r["pred"]) for r in rows) * 1.1
    ax.plot([low, top], [low, top], "k-", lw=0.5)
    ax.plot([low, top], [low * 1.15, top * 1.15], "k:", lw=0.5)
    ax.plot([low, top], [low * 0.85, top * 0.85], "k:", lw=0.5, label="+-15 %")
    ax.set(xscale="log", yscale="log", xlabel="measured step (s)", ylabel="model step (s)",
           title="Schedule model at W = 2")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "model_error.png"), dpi=100)

    models = sorted({r["model"] for r in rows})
    fig, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4.5), squeeze=False)
    rates = np.logspace(-1.2, 1.2, 60)
    for ax, model in zip(axes[0], models):
        sel = [r for r in rows if r["model"] == model]
        for colour, kind in zip(("C0", "C1", "C2", "C3", "C4"), CONFIGS):
            pts = [r for r in sel if key(r)[1:] == kind and r["rate_gbit"] > 0]
            line = curve(p, rows, model, kind, rates)
            if not pts or line is None:
                continue
            name = "replicated" if kind[0] == "replicated" else f"fsdp K{kind[1]} {kind[2]}"
            ax.plot(rates, line, color=colour, label=name)
            ax.scatter([r["rate_gbit"] for r in pts], [r["step_s"] for r in pts], color=colour)
            ax.scatter([r["rate_gbit"] * 1.08 for r in pts], [r["pred"] for r in pts], facecolors="none",
                       edgecolors=colour)
        ax.set(xscale="log", yscale="log", xlabel="link (Gbit/s)", ylabel="step (s)",
               title=f"{model} ({sel[0]['params'] / 1e6:.1f} M parameters)")
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.legend(fontsize=7)
    fig.suptitle("W = 2: measured (dots), the model with each point's own work (circles) and with the "
                 "loopback run's compute (lines)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "step_vs_bandwidth.png"), dpi=100)

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for (name, gpu, net), effs in projections.items():
        ax.plot([8, 64, 512], [100 * e[0] for e in effs], marker="o",
                ls="-" if "Ether" in net else "--", label=f"{name} {gpu} {net}")
    ax.set(xscale="log", xlabel="GPUs", ylabel="weak-scaling efficiency (%)", ylim=(0, 105),
           title="Projected FSDP efficiency (compute / step)")
    ax.set_xticks([8, 64, 512], ["8", "64", "512"])
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "projection.png"), dpi=100)


if __name__ == "__main__":
    main()
