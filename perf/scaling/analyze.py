#!/usr/bin/env python3
"""The scaling study's analysis (perf/scaling/README.md): fits an analytic step-time model to part of
run.sh's measurements, reports its error on the held-out rest, finds where FSDP and the replicated run swap
places as the bandwidth changes, and projects weak-scaling efficiency to 8, 64 and 512 GPUs for the 7B and
11B presets on A100- and H100-class compute over 100 Gbit/s Ethernet and 4 x 200 Gbit/s InfiniBand.

Usage: perf/scaling/analyze.py [results.csv] [--plots DIR]   (numpy and matplotlib; not a build dependency)

The model, per step of one rank (W = 2 here; D = bytes one direction of the link carries, half of the
gather / reduce bytes each rank sends plus receives, as fsdp_bench and metrics.jsonl count them):
  link rate     r(B) = 1 / (1 / (eta B) + 1 / C)   eta: share of the shaped rate TCP reaches;
                                                     C: what Open MPI's TCP path moves on one core (loopback)
  transfer      T_g = D_gather / r,  T_r = D_reduce / r
  work          T_c = the step measured in the same run less all the time it waited for communication
                      (compute and optimizer: an input, because the machine's load changes it up to 4x
                      between runs; the model is judged on the communication it adds)
  step          replicated:  T_c + max(0, T_r - w_r T_c)         all-reduce overlapped with backward
                fsdp K = 1:  T_c + T_g + max(0, T_r - w_r T_c)   gathers exposed, reductions overlapped
                fsdp K >= 2: T_c + max(0, T_g + T_r - w_K T_c)   both overlapped through the window
w (the share of the work that communication can hide behind) is fitted per strategy class; eta, C, w_r,
w_2, w_4 are the five parameters.
"""
import argparse
import csv
import math
import os
import sys
import tomllib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if not r["step_s"]:
                continue  # a point that failed to print its line
            for key in ("rate_gbit", "step_s", "compute_s", "gather_wait_s", "waits_s", "gather_mb", "reduce_mb", "params"):
                r[key] = float(r[key])
            r["k"] = int(r["k"])
            rows.append(r)
    return rows


def step_model(p, rate_gbit, strategy, k, compute, gather_bytes, reduce_bytes):
    """Predicted step seconds; gather_bytes / reduce_bytes: one direction of the link."""
    eta, cpu_bps, w_r, w_2, w_4 = p
    link = 1.0 / (1.0 / (eta * rate_gbit * 1e9 / 8) + 1.0 / cpu_bps) if rate_gbit > 0 else cpu_bps
    t_g, t_r = gather_bytes / link, reduce_bytes / link
    base = compute
    if strategy == "replicated":
        return base + max(0.0, t_r - w_r * compute)
    if k == 1:
        return base + t_g + max(0.0, t_r - w_r * compute)
    return base + max(0.0, t_g + t_r - (w_2 if k == 2 else w_4) * compute)


def work(r):
    return r["step_s"] - r["waits_s"]


def predict(p, r):
    return step_model(p, r["rate_gbit"], r["strategy"], r["k"], work(r), r["gather_mb"] * 1e6 / 2,
                      r["reduce_mb"] * 1e6 / 2)


def nelder_mead(f, x0, iterations=4000):
    """Minimises f from x0 (numpy has no optimiser and scipy is not installed here)."""
    n = len(x0)
    simplex = [np.array(x0, float)] + [np.array(x0, float) + np.eye(n)[i] * 0.3 for i in range(n)]
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
    """Unconstrained search variables -> parameters (eta, w in (0, 1); C positive)."""
    sig = lambda v: 1 / (1 + math.exp(-v))
    return (sig(x[0]), math.exp(x[1]) * 1e8, sig(x[2]), sig(x[3]), sig(x[4]))


def fit(rows):
    def loss(x):
        p = unpack(x)
        return sum((predict(p, r) / r["step_s"] - 1) ** 2 for r in rows)
    best = min((nelder_mead(loss, x0) for x0 in ([1.5, 0.5, 0, 0, 0], [0.5, 1.0, 1, 2, 1])), key=loss)
    return unpack(best)


def crossover(p, strategy_b, k_b, comm_b, ref_rows):
    """Bandwidths (Gbit/s, 0.01-100) where fsdp (K, comm) and replicated swap places, for the model of
    ref_rows (its replicated and fsdp points give the compute and the bytes; compute at the median)."""
    rep = [r for r in ref_rows if r["strategy"] == "replicated"]
    fs = [r for r in ref_rows if r["strategy"] == strategy_b and r["k"] == k_b and r["comm"] == comm_b]
    if not rep or not fs:
        return []
    compute = float(np.median([work(r) for r in rep + fs]))
    rates = np.logspace(-2, 2, 400)
    diff = [step_model(p, b, "fsdp", k_b, compute, fs[0]["gather_mb"] * 5e5, fs[0]["reduce_mb"] * 5e5)
            - step_model(p, b, "replicated", 2, compute, 0, rep[0]["reduce_mb"] * 5e5) for b in rates]
    # Each crossing, with the strategy that is faster just below it.
    return [(float(math.sqrt(rates[i] * rates[i + 1])), "fsdp" if diff[i] < 0 else "replicated")
            for i in range(len(rates) - 1) if diff[i] * diff[i + 1] < 0]


# --- projection to GPU clusters -------------------------------------------------------------------------------

def preset(name):
    with open(os.path.join(HERE, "..", "..", "inputs", name), "rb") as f:
        m = tomllib.load(f)["model"]
    d, layers, ff, vocab = m["d_model"], m["n_layers"], m["d_ff"], m["vocab_size"]
    kv = d // m["n_heads"] * m["n_kv_heads"]
    block = d * (d + 2 * kv) + d * d + 3 * d * ff + 2 * d
    params = layers * block + vocab * d * (1 if m.get("tie_embeddings", True) else 2) + d
    matmul = layers * (d * (d + 2 * kv) + d * d + 3 * d * ff) + vocab * d  # ModelConfig::train_flops
    return params, layers, d, matmul


SEQ, TOKENS_PER_GPU = 4096, 2 * 4096  # one micro-batch of 2 sequences per GPU
# Dense bf16 peaks (A100 SXM 312 TFLOP/s, H100 SXM 989 TFLOP/s) at the model flop utilisation of the seeds'
# Granite 7B run: 4550 tokens/s per A100 (/work/shared/seeds/000_*).
GPUS = {"A100": 312e12, "H100": 989e12}
NETS = {"100G Ethernet": 100e9, "4x200G InfiniBand": 800e9}  # per node of 8 GPUs
NVLINK = 600e9 * 8 / 2  # bytes/s one direction between GPUs of a node (600 GB/s card-to-card, both ways)


def seed_mfu():
    _, layers, d, matmul = preset("llama-7b.toml")
    flops_per_token = 6 * matmul + 6 * layers * d * SEQ
    return 4550 * flops_per_token / GPUS["A100"]


def project(p, preset_name, gpu, net_bps, n_gpus, mfu, eta_net=0.8):
    """Weak scaling: each GPU keeps TOKENS_PER_GPU per micro-batch; FSDP over all n_gpus with bf16 gathers
    (forward and again in backward) and bf16 reduce-scatters; a ring's inter-node hops carry (N-1)/N of
    each whole buffer through every node's network; inside one node, NVLink. Returns (efficiency, step s,
    compute s, link Gbit/s needed on average)."""
    params, layers, d, matmul = preset(preset_name)
    compute = TOKENS_PER_GPU * (6 * matmul + 6 * layers * d * SEQ) / (GPUS[gpu] * mfu)
    share = (n_gpus - 1) / n_gpus
    per_direction = share * (2 * params * 2 + params * 2)
    rate = NVLINK if n_gpus <= 8 else eta_net * net_bps / 8
    # No CPU limit and no optimizer term: NCCL moves data without the host, and AdamW on 1/N of the
    # parameters is small beside compute on a GPU.
    step = step_model((1.0, 1e30) + tuple(p[2:]), rate * 8 / 1e9, "fsdp", 2, compute, per_direction, 0)
    return compute / step, step, compute, per_direction * 8 / step / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?", default=os.path.join(HERE, "results.csv"))
    ap.add_argument("--plots", default=HERE, help="directory for the PNG plots")
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
    print(f"parameters: eta {p[0]:.3f}, C {p[1] * 8 / 1e9:.2f} Gbit/s, w_replicated {p[2]:.2f}, w_K2 {p[3]:.2f}, "
          f"w_K4 {p[4]:.2f}")
    for r in rows:
        r["pred"] = predict(p, r)
        r["err"] = 100 * (r["pred"] / r["step_s"] - 1)
    print("\n| held out | link | model | strategy | K | comm | measured s | model s | error |")
    print("|---|---|---|---|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {'yes' if r['held_out'] else 'no'} | {r['link']} | {r['model']} | {r['strategy']} | {r['k']} | "
              f"{r['comm']} | {r['step_s']:.3f} | {r['pred']:.3f} | {r['err']:+.1f} % |")
    fit_err = max(abs(r["err"]) for r in fitted)
    print(f"\nmax fit error: {fit_err:.1f} %")
    if held:
        print(f"max model error: {max(abs(r['err']) for r in held):.1f} %")

    # Loopback target: fsdp K = 2 over 1 Gbit/s against its own loopback step rate, as measured and at equal
    # compute (each step divided by its own run's compute: the machine's load changes compute between runs).
    print("\nFSDP K = 2 (fp32) step rate at 1 Gbit/s as a share of loopback's, per model "
          "(measured; at equal compute):")
    for model in sorted({r["model"] for r in rows}):
        pick = lambda link: [r for r in rows if r["model"] == model and r["link"] == link and r["strategy"] == "fsdp"
                             and r["k"] == 2 and r["comm"] == "fp32"]
        one, loop = pick("1gbit"), pick("loopback")
        if one and loop:
            c_one, c_loop = work(one[0]), work(loop[0])
            need = (one[0]["gather_mb"] + one[0]["reduce_mb"]) / 2 * 8e6 / 1e9  # seconds at 1 Gbit/s
            print(f"  {model}: {100 * loop[0]['step_s'] / one[0]['step_s']:.0f} %; "
                  f"{100 * (loop[0]['step_s'] / c_loop) / (one[0]['step_s'] / c_one):.0f} % "
                  f"(work {c_loop:.2f} s on loopback, {c_one:.2f} s at 1 Gbit/s; "
                  f"its communication at the line rate {need:.2f} s)")

    print("\nFSDP against replicated per bandwidth: measured step s (model s) / MB each rank sends+receives per step")
    print("| model | link | replicated | fsdp K2 fp32 | fsdp K2 bf16 | fastest measured | fastest by the model |")
    print("|---|---|---|---|---|---|---|")
    kinds = (("replicated", 2, "fp32"), ("fsdp", 2, "fp32"), ("fsdp", 2, "bf16"))
    for model in sorted({r["model"] for r in rows}):
        for link in dict.fromkeys(r["link"] for r in rows):
            cells = [next((r for r in rows if r["model"] == model and r["link"] == link and (r["strategy"], r["k"],
                                                                                            r["comm"]) == kind), None)
                     for kind in kinds]
            if None in cells:
                continue
            names = ["replicated", "fsdp fp32", "fsdp bf16"]
            fastest = lambda key: names[min(range(3), key=lambda i: cells[i][key])]
            print(f"| {model} | {link} | " + " | ".join(
                f"{r['step_s']:.2f} ({r['pred']:.2f}) / {r['gather_mb'] + r['reduce_mb']:.0f}" for r in cells)
                + f" | {fastest('step_s')} | {fastest('pred')} |")
    for model in sorted({r["model"] for r in rows}):
        for comm in ("fp32", "bf16"):
            cross = crossover(p, "fsdp", 2, comm, [r for r in rows if r["model"] == model])
            print(f"{model} at its median work: fsdp K2 {comm} and replicated swap places at "
                  + (", ".join(f"{c:.2f} Gbit/s ({below} faster below)" for c, below in cross) if cross
                     else "no bandwidth in 0.01-100 Gbit/s"))

    mfu = seed_mfu()
    print(f"\nprojection (MFU {100 * mfu:.0f} % from the seeds' 4550 tokens/s per A100 on Granite 7B; "
          f"{TOKENS_PER_GPU} tokens per GPU per micro-batch; FSDP K = 2 overlap w = {p[3]:.2f}; bf16 on the wire; "
          f"80 % of the nominal network rate):")
    projections = {}
    for name, preset_file in (("7B", "llama-7b.toml"), ("11B", "llama-11b.toml")):
        for gpu in GPUS:
            for net, bps in NETS.items():
                effs = [project(p, preset_file, gpu, bps, n, mfu) for n in (8, 64, 512)]
                projections[(name, gpu, net)] = effs
                print(f"  {name:>3} {gpu} {net:>18}: " + ", ".join(
                    f"{n} GPUs {100 * e[0]:.0f} % ({e[3]:.0f} Gbit/s)" for n, e in zip((8, 64, 512), effs)))
    seed = project(p, "llama-11b.toml", "A100", 200e9, 1600, mfu, eta_net=120 / 200)
    print(f"  seeds: 11B on 200 x 8 A100 over 2 x 100 Gbit/s Ethernet (120 Gbit/s usable): model {100 * seed[0]:.0f} % "
          f"efficiency, {seed[3]:.0f} Gbit/s average per node (IBM measured a 32 Gbit/s peak; 4.5x from the rate "
          f"limiter, which this model has no term for beyond w)")
    # The tokens per GPU and micro-batch at which 11B's communication fits in 32 Gbit/s behind its compute.
    bits = seed[3] * 1e9 * seed[1]  # per micro-batch through each node's network
    tokens = TOKENS_PER_GPU * (bits / 32e9) / (p[3] * seed[2])
    print(f"  at IBM's 32 Gbit/s the model needs >= {tokens:.0f} tokens per A100 per micro-batch "
          f"({tokens / SEQ:.1f} sequences of {SEQ}) for the communication to hide behind compute")
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
    top = max(max(r["step_s"], r["pred"]) for r in rows) * 1.1
    ax.plot([0, top], [0, top], "k-", lw=0.5)
    ax.plot([0, top], [0, top * 1.15], "k:", lw=0.5)
    ax.plot([0, top], [0, top * 0.85], "k:", lw=0.5, label="+-15 %")
    ax.set(xscale="log", yscale="log", xlabel="measured step (s)", ylabel="model step (s)",
           title="Step-time model at W = 2")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "model_error.png"), dpi=100)

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=False)
    rates = np.logspace(-1.2, 1.2, 100)
    styles = {("replicated", 2, "fp32"): "C0", ("fsdp", 1, "fp32"): "C1", ("fsdp", 2, "fp32"): "C2",
              ("fsdp", 2, "bf16"): "C3", ("fsdp", 4, "fp32"): "C4"}
    for ax, model in zip(axes, sorted({r["model"] for r in rows})):
        sel = [r for r in rows if r["model"] == model]
        compute = float(np.median([work(r) for r in sel]))
        for (strategy, k, comm), colour in styles.items():
            pts = [r for r in sel if r["strategy"] == strategy and r["k"] == k and r["comm"] == comm and r["rate_gbit"] > 0]
            if not pts:
                continue
            curve = [step_model(p, b, strategy, k, compute, pts[0]["gather_mb"] * 5e5, pts[0]["reduce_mb"] * 5e5)
                     for b in rates]
            name = strategy if strategy == "replicated" else f"fsdp K{k} {comm}"
            ax.plot(rates, curve, color=colour, label=name)
            ax.scatter([r["rate_gbit"] for r in pts], [r["step_s"] for r in pts], color=colour)
            ax.scatter([r["rate_gbit"] * 1.08 for r in pts], [r["pred"] for r in pts], facecolors="none",
                       edgecolors=colour)
        ax.set(xscale="log", yscale="log", xlabel="link (Gbit/s)", ylabel="step (s)",
               title=f"{model} ({sel[0]['params'] / 1e6:.1f} M parameters)")
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.legend(fontsize=7)
    fig.suptitle("W = 2: measured (dots), the model for each point's own compute (circles) and at the median "
                 "compute of the model's points (lines)")
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
