#!/usr/bin/env python3
"""Part 2 of the device check (perf/gpu/check.sh): llmtrain's training throughput beside PyTorch's on the same
model and GPU, from the files the runs left. Needs no torch.

  throughput.py peak DRY_RUN METRICS     the peak llmtrain's MFU was measured against, in TFLOP/s (its
                                         metrics' tokens/s x flops per token / mfu); nothing if unknown
  throughput.py table RUNS OUT_JSON      the table (markdown, stdout) and its numbers (OUT_JSON) of the runs
                                         listed in RUNS, one JSON object a line: model, dry_run, metrics,
                                         llmtrain_rc, torch (torch_reference.py's JSON lines), torch_rc

llmtrain's figures are medians over its steps after the first two (warm-up), or over all when it ran fewer;
MFU is recomputed for both sides against the same peak (llmtrain's, else PyTorch's measured matrix product).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from model_shape import read_dry_run, train_flops_per_token  # noqa: E402  (perf/)

WARMUP_STEPS = 2


def llmtrain_steps(path):
    lines = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by the time limit
                if record.get("type") == "train":
                    lines.append(record)
    except OSError:
        return []
    return lines[WARMUP_STEPS:] if len(lines) > WARMUP_STEPS else lines


def flops_per_token(dry_run):
    run = read_dry_run(dry_run)
    return train_flops_per_token(run["shape"], run["seq"]), run


def llmtrain_peak(dry_run, metrics):
    steps = [s for s in llmtrain_steps(metrics) if s.get("mfu", 0) > 0]
    if not steps:
        return None
    fpt, _ = flops_per_token(dry_run)
    return statistics.median(fpt * s["tokens_per_s"] / s["mfu"] for s in steps)


def describe_rc(rc):
    return {"0": "ok", "124": "time limit", "137": "killed at the time limit", "": "not run"}.get(str(rc), f"exit {rc}")


def gib(n):
    return f"{n / 2**30:.1f} GiB" if n else "n/a"


def table(runs_path, out_json):
    with open(runs_path) as f:
        runs = [json.loads(line) for line in f if line.strip()]
    rows, results = [], []
    for run in runs:
        result = dict(model=run["model"], llmtrain_status=describe_rc(run.get("llmtrain_rc", "")),
                      torch_status=describe_rc(run.get("torch_rc", "")))
        try:
            fpt, shape = flops_per_token(run["dry_run"])
            result.update(parameters=shape["parameters"], tokens_per_step=shape["rows"] * shape["seq"],
                          flops_per_token=fpt)
        except (OSError, ValueError, KeyError) as error:
            result["error"] = f"no model shape: {error}"
            results.append(result)
            rows.append(f"| {run['model']} | {result['error']} |||||||||")
            continue
        steps = llmtrain_steps(run["metrics"])
        if steps:
            result["llmtrain"] = dict(
                steps=len(steps), tokens_per_s=statistics.median(s["tokens_per_s"] for s in steps),
                mfu_logged=statistics.median(s.get("mfu", 0.0) for s in steps),
                device_peak_bytes=max(s.get("mem", {}).get("device_peak_bytes", 0) for s in steps),
                loss_last=steps[-1].get("loss"))
        torch_runs = {}
        try:
            with open(run["torch"]) as f:
                for line in f:
                    r = json.loads(line)
                    torch_runs[r["mode"]] = r
        except (OSError, json.JSONDecodeError):
            pass
        result["torch"] = torch_runs
        peak = llmtrain_peak(run["dry_run"], run["metrics"])
        result["peak_tflops"], result["peak_source"] = (peak / 1e12, "llmtrain's") if peak else (None, None)
        if peak is None and torch_runs:
            any_run = next(iter(torch_runs.values()))
            result["peak_tflops"], result["peak_source"] = any_run["peak_tflops"], "PyTorch's " + any_run["peak_source"]
        peak_flops = (result["peak_tflops"] or 0) * 1e12

        def mfu(tokens_per_s):
            return f"{100 * fpt * tokens_per_s / peak_flops:.1f}%" if peak_flops else "n/a"

        ours = result.get("llmtrain", {}).get("tokens_per_s")
        cells = [run["model"], f"{shape['parameters'] / 1e6:.0f}M", str(shape["rows"] * shape["seq"])]
        cells += [f"{ours:,.0f} ({mfu(ours)})" if ours else result["llmtrain_status"],
                  gib(result.get("llmtrain", {}).get("device_peak_bytes"))]
        for mode in ("eager", "compile"):
            r = torch_runs.get(mode)
            missing = "not run" if result["torch_status"] == "ok" else result["torch_status"]
            cells.append(f"{r['tokens_per_s']:,.0f} ({mfu(r['tokens_per_s'])}), {gib(r['peak_memory_bytes'])}"
                         if r else missing)
            cells.append(f"{ours / r['tokens_per_s']:.2f}" if r and ours else "n/a")
        cells.append(f"{result['peak_tflops']:.4g} ({result['peak_source']})" if result["peak_tflops"] else "n/a")
        cells.append(f"llmtrain {result['llmtrain_status']}, {len(steps)} steps; torch {result['torch_status']}")
        rows.append("| " + " | ".join(cells) + " |")
        results.append(result)
    print("| model | parameters | tokens/step | llmtrain tokens/s (MFU) | llmtrain device peak | "
          "PyTorch eager tokens/s (MFU), peak memory | llmtrain / eager | PyTorch compiled tokens/s (MFU), peak memory | "
          "llmtrain / compiled | peak TFLOP/s | runs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    with open(out_json, "w") as f:
        json.dump(results, f, indent=1)


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "peak":
        peak = llmtrain_peak(sys.argv[2], sys.argv[3])
        if peak:
            print(f"{peak / 1e12:.1f}")
    elif len(sys.argv) == 4 and sys.argv[1] == "table":
        table(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
