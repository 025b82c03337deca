#!/usr/bin/env python3
"""Builds the PyTorch reference for llmtrain's decoder and writes tests/golden/reference.{json,bin}.

The same tiny Llama/Granite model as the C++ test (untied head, grouped-query attention, document masking,
rotary theta 5000, one ignored target) from the same weights, in float64:
  - logits of every position, the mean cross-entropy loss, the gradient of every parameter tensor;
  - the losses of 10 AdamW steps (warmup + cosine schedule, weight decay except norms and embeddings,
    gradient clipping at norm 1.0) on the same batch.
The weights are drawn here (numpy, fixed seed) and stored, so C++ loads exactly these values.

reference.bin holds little-endian float32 arrays back to back; reference.json names each array with its
offset and shape, plus the config, the batch and the training settings. Needs: torch, numpy (PyPI);
the C++ build and tests do not. Run: python3 tests/golden/make_reference.py
"""
import json
import math
import pathlib

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
HERE = pathlib.Path(__file__).resolve().parent

CONFIG = dict(vocab_size=64, dim=32, n_layers=2, n_heads=4, n_kv_heads=2, ffn_hidden=48, max_seq_len=16,
              rope_theta=5000.0, norm_eps=1e-5, tied_embeddings=False, doc_masking=True, ignore_index=-1)
TRAIN = dict(steps=10, lr=1e-2, min_lr=1e-3, warmup_steps=3, beta1=0.9, beta2=0.95, eps=1e-8,
             weight_decay=0.1, grad_clip=1.0)
B, T = 2, 16


def tensor_shapes(c):
    hd = c["dim"] // c["n_heads"]
    shapes = {"embedding.tok_embedding": (c["vocab_size"], c["dim"])}
    for l in range(c["n_layers"]):
        p = f"block.{l}."
        shapes.update({p + "attn_norm": (c["dim"],), p + "wq": (c["n_heads"] * hd, c["dim"]),
                       p + "wk": (c["n_kv_heads"] * hd, c["dim"]), p + "wv": (c["n_kv_heads"] * hd, c["dim"]),
                       p + "wo": (c["dim"], c["n_heads"] * hd), p + "ffn_norm": (c["dim"],),
                       p + "w1": (c["ffn_hidden"], c["dim"]), p + "w3": (c["ffn_hidden"], c["dim"]),
                       p + "w2": (c["dim"], c["ffn_hidden"])})
    shapes["head.final_norm"] = (c["dim"],)
    shapes["head.output"] = (c["vocab_size"], c["dim"])
    return shapes


def rmsnorm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rope(x, cos, sin):  # x [B, heads, T, hd]; Hugging Face "rotate half"
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def forward(P, tokens, doc, c):
    hd = c["dim"] // c["n_heads"]
    group = c["n_heads"] // c["n_kv_heads"]
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    docs = doc[:, :-1]
    pos = torch.arange(T, dtype=torch.float64)
    inv = c["rope_theta"] ** (-2.0 * torch.arange(hd // 2, dtype=torch.float64) / hd)
    ang = pos[:, None] * inv[None, :]
    cos, sin = torch.cos(ang), torch.sin(ang)
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    mask = causal[None] & (docs[:, :, None] == docs[:, None, :])  # [B, T(query), T(key)]
    x = P["embedding.tok_embedding"][inputs]
    for l in range(c["n_layers"]):
        p = f"block.{l}."
        h = rmsnorm(x, P[p + "attn_norm"], c["norm_eps"])
        q = (h @ P[p + "wq"].T).view(B, T, c["n_heads"], hd).transpose(1, 2)
        k = (h @ P[p + "wk"].T).view(B, T, c["n_kv_heads"], hd).transpose(1, 2)
        v = (h @ P[p + "wv"].T).view(B, T, c["n_kv_heads"], hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        s = s.masked_fill(~mask[:, None], float("-inf"))
        a = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(B, T, c["dim"])
        x = x + a @ P[p + "wo"].T
        h = rmsnorm(x, P[p + "ffn_norm"], c["norm_eps"])
        x = x + (torch.nn.functional.silu(h @ P[p + "w1"].T) * (h @ P[p + "w3"].T)) @ P[p + "w2"].T
    logits = rmsnorm(x, P["head.final_norm"], c["norm_eps"]) @ P["head.output"].T
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, c["vocab_size"]), targets.reshape(-1),
                                             ignore_index=c["ignore_index"])
    return logits, loss


def learning_rate(step, t):
    if step < t["warmup_steps"]:
        return t["lr"] * (step + 1) / t["warmup_steps"]
    progress = min(1.0, (step - t["warmup_steps"]) / max(1, t["steps"] - t["warmup_steps"]))
    return t["min_lr"] + (t["lr"] - t["min_lr"]) * 0.5 * (1 + math.cos(math.pi * progress))


def main():
    rng = np.random.default_rng(20241121)
    shapes = tensor_shapes(CONFIG)
    weights = {}
    for name, shape in shapes.items():
        if len(shape) == 1:  # norm weights near 1, so that their gradients matter
            weights[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            weights[name] = (0.1 * rng.standard_normal(shape)).astype(np.float32)
    tokens = rng.integers(0, CONFIG["vocab_size"], size=(B, T + 1)).astype(np.int32)
    tokens[1, T] = CONFIG["ignore_index"]  # an ignored target (last position: never an input)
    doc = np.zeros((B, T + 1), dtype=np.int32)
    doc[0, 6:] = 1
    doc[0, 11:] = 2
    doc[1, 9:] = 1

    P = {n: torch.tensor(w, dtype=torch.float64, requires_grad=True) for n, w in weights.items()}
    tok_t, doc_t = torch.tensor(tokens, dtype=torch.long), torch.tensor(doc)
    logits, loss = forward(P, tok_t, doc_t, CONFIG)
    loss.backward()
    arrays = {"weights." + n: w for n, w in weights.items()}
    arrays.update({"grads." + n: P[n].grad.numpy() for n in shapes})
    arrays["logits"] = logits.detach().numpy().reshape(B * T, CONFIG["vocab_size"])

    # 10 AdamW steps with torch.optim.AdamW, decay groups as in llmtrain.
    P = {n: torch.tensor(w, dtype=torch.float64, requires_grad=True) for n, w in weights.items()}
    exempt = [n for n in shapes if len(shapes[n]) == 1 or n == "embedding.tok_embedding"]
    groups = [{"params": [P[n] for n in shapes if n not in exempt], "weight_decay": TRAIN["weight_decay"]},
              {"params": [P[n] for n in exempt], "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=TRAIN["lr"], betas=(TRAIN["beta1"], TRAIN["beta2"]), eps=TRAIN["eps"],
                            foreach=False)
    losses = []
    for step in range(TRAIN["steps"]):
        for g in opt.param_groups:
            g["lr"] = learning_rate(step, TRAIN)
        opt.zero_grad()
        _, loss_s = forward(P, tok_t, doc_t, CONFIG)
        loss_s.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), TRAIN["grad_clip"])
        opt.step()
        losses.append(loss_s.item())

    index, blob, offset = {}, bytearray(), 0
    for name, a in arrays.items():
        a = np.ascontiguousarray(a, dtype="<f4")
        index[name] = {"offset": offset, "shape": list(a.shape)}
        blob += a.tobytes()
        offset += a.size
    meta = {"config": CONFIG, "train": TRAIN, "batch": {"rows": B, "seq_len": T, "tokens": tokens.ravel().tolist(),
            "doc_index": doc.ravel().tolist()}, "loss": loss.item(), "adamw_losses": losses, "arrays": index,
            "generator": "tests/golden/make_reference.py, torch " + torch.__version__ + ", float64"}
    (HERE / "reference.json").write_text(json.dumps(meta, indent=1) + "\n")
    (HERE / "reference.bin").write_bytes(bytes(blob))
    print(f"loss {loss.item():.6f}; adamw losses {losses[0]:.4f} -> {losses[-1]:.4f}; {offset} floats")


if __name__ == "__main__":
    main()
