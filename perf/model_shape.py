"""The model shape the PyTorch references build (perf/torch_train_step.py, perf/gpu/torch_reference.py) and
the numbers derived from it without torch: presets, llmtrain's flops per token, and the shape llmtrain itself
resolved for a configuration (its --dry-run printout), so no default of llmtrain's is restated here.

A shape is a dict: vocab, dim, n_layers, n_heads, n_kv_heads, ffn_hidden, rope_theta, norm_eps, tied
(llmtrain's [model] keys, resolved: no 0 meaning "derive it").
"""
import re
import tomllib

SHAPE_DEFAULTS = dict(vocab=50257, rope_theta=10000.0, norm_eps=1e-5, tied=True)
PRESETS = {
    "tiny": dict(SHAPE_DEFAULTS, dim=128, n_layers=4, n_heads=4, n_kv_heads=2, ffn_hidden=384),
    "small": dict(SHAPE_DEFAULTS, dim=768, n_layers=12, n_heads=12, n_kv_heads=4, ffn_hidden=2048),
}
# [model] keys the references do not implement, with the value under which the model computes without them.
UNSUPPORTED_UNLESS = {"mask_documents": False, "embedding_multiplier": 1.0, "residual_multiplier": 1.0,
                      "attention_multiplier": 0.0, "logits_scaling": 1.0, "rope_type": "default"}


def train_flops_per_token(c, seq):
    """llmtrain's MFU numerator (ModelConfig::train_flops): 6 flops per matrix weight and token, the head
    once, plus causal attention (QK^T and PV over seq / 2 keys on average, x3 for training)."""
    hd = c["dim"] // c["n_heads"]
    matmul_params = c["n_layers"] * (c["dim"] * (c["n_heads"] + 2 * c["n_kv_heads"]) * hd + c["dim"] ** 2
                                     + 3 * c["dim"] * c["ffn_hidden"]) + c["vocab"] * c["dim"]
    return 6 * matmul_params + 6 * c["n_layers"] * c["dim"] * seq


def read_dry_run(path):
    """Shape, parameter count, seq_len, rows per step and precision from `llmtrain --dry-run`'s printout: the
    resolved configuration (TOML) up to the `model: ...` summary line, whose derived sizes fill the keys a
    file leaves at 0. Raises ValueError for a printout it cannot read or a model feature not implemented."""
    with open(path) as f:
        text = f.read()
    summary = re.search(r"^model: [\d.]+[KMB]? parameters \((\d+)\), (\d+) blocks of width (\d+), "
                        r"SwiGLU width (\d+), vocabulary (\d+)$", text, re.M)
    if summary is None:
        raise ValueError(f"{path}: no 'model: ... parameters' line; is it llmtrain --dry-run's output?")
    config = tomllib.loads(text[:summary.start()])
    m = config["model"]
    for key, neutral in UNSUPPORTED_UNLESS.items():
        if m.get(key, neutral) != neutral:
            raise ValueError(f"{path}: model.{key} = {m[key]!r} is not implemented by the PyTorch reference")
    shape = dict(vocab=int(summary[5]), dim=m["d_model"], n_layers=m["n_layers"], n_heads=m["n_heads"],
                 n_kv_heads=m["n_kv_heads"] or m["n_heads"], ffn_hidden=int(summary[4]),
                 rope_theta=float(m["rope_theta"]), norm_eps=float(m["norm_eps"]), tied=m["tie_embeddings"])
    train = config["train"]
    return dict(shape=shape, parameters=int(summary[1]), seq=config["data"]["seq_len"],
                rows=train["batch_size"] * train["grad_accum"], precision=train["precision"])


if __name__ == "__main__":  # python3 perf/model_shape.py DRY_RUN: what the references read from it, as JSON
    import json
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python3 perf/model_shape.py DRY_RUN  (the output of llmtrain --dry-run CONFIG)")
    try:
        run = read_dry_run(sys.argv[1])
    except ValueError as error:
        sys.exit(str(error))
    run["flops_per_token"] = train_flops_per_token(run["shape"], run["seq"])
    print(json.dumps(run, sort_keys=True))
