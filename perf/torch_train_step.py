#!/usr/bin/env python3
"""PyTorch CPU float32 reference for perf/train_step_bench: the same Llama-style model (preset `small`:
dim 768, 12 layers, 12 heads, 4 KV heads, SwiGLU 2048, GPT-2 vocabulary, tied head), the same batch shape
and thread count, one training step = forward + backward + clip + AdamW. Uses PyTorch's fast paths
(scaled_dot_product_attention with GQA, F.rms_norm, foreach AdamW). The model (Model, train_flops_per_token)
is also the GPU reference's, perf/gpu/torch_reference.py, which builds it from any llmtrain configuration.

Usage: python3 perf/torch_train_step.py [--preset small|tiny] [--seq 1024] [--rows 1] [--steps 2] [--threads 1]
                                        [--precision fp32|bf16]
--precision bf16 runs forward and loss under torch.autocast("cpu", dtype=torch.bfloat16), fp32 weights and
optimizer (the peer of llmtrain's train.precision = "bf16").
Needs torch (PyPI); nothing in the build or tests does.
"""
import argparse
import contextlib
import math
import time

import torch
import torch.nn.functional as F

from model_shape import PRESETS, train_flops_per_token


class Block(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        d, hd = c["dim"], c["dim"] // c["n_heads"]
        self.c, self.hd = c, hd
        self.attn_norm = torch.nn.Parameter(torch.ones(d))
        self.wqkv = torch.nn.Linear(d, (c["n_heads"] + 2 * c["n_kv_heads"]) * hd, bias=False)
        self.wo = torch.nn.Linear(d, d, bias=False)
        self.ffn_norm = torch.nn.Parameter(torch.ones(d))
        self.w13 = torch.nn.Linear(d, 2 * c["ffn_hidden"], bias=False)
        self.w2 = torch.nn.Linear(c["ffn_hidden"], d, bias=False)

    def forward(self, x, cos, sin):
        B, T, D = x.shape
        c, hd = self.c, self.hd
        h = F.rms_norm(x, (D,), self.attn_norm, c["norm_eps"])
        q, k, v = self.wqkv(h).split([c["n_heads"] * hd, c["n_kv_heads"] * hd, c["n_kv_heads"] * hd], dim=-1)
        q = q.view(B, T, c["n_heads"], hd).transpose(1, 2)
        k = k.view(B, T, c["n_kv_heads"], hd).transpose(1, 2)
        v = v.view(B, T, c["n_kv_heads"], hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.wo(a.transpose(1, 2).reshape(B, T, D))
        g, u = self.w13(F.rms_norm(x, (D,), self.ffn_norm, c["norm_eps"])).chunk(2, dim=-1)
        return x + self.w2(F.silu(g) * u)


def rope(x, cos, sin):  # Hugging Face's rotate_half layout: pairs (i, i + head_dim / 2), as llmtrain
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Model(torch.nn.Module):
    def __init__(self, c, seq):
        super().__init__()
        self.c = c
        self.embedding = torch.nn.Embedding(c["vocab"], c["dim"])
        self.blocks = torch.nn.ModuleList(Block(c) for _ in range(c["n_layers"]))
        self.final_norm = torch.nn.Parameter(torch.ones(c["dim"]))
        self.head = None if c["tied"] else torch.nn.Linear(c["dim"], c["vocab"], bias=False)
        hd = c["dim"] // c["n_heads"]
        ang = torch.arange(seq)[:, None] * c["rope_theta"] ** (-2.0 * torch.arange(hd // 2) / hd)[None, :]
        self.register_buffer("cos", torch.cos(ang))
        self.register_buffer("sin", torch.sin(ang))

    def forward(self, tokens, targets):
        x = self.embedding(tokens)
        for block in self.blocks:
            x = block(x, self.cos, self.sin)
        head = self.embedding.weight if self.head is None else self.head.weight
        logits = F.rms_norm(x, (x.shape[-1],), self.final_norm, self.c["norm_eps"]) @ head.T
        return F.cross_entropy(logits.view(-1, self.c["vocab"]), targets.view(-1))


def init_weights(model):
    """Llama-style init, as llmtrain: normal(0, 0.02) matrices, norms 1."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="small")
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--rows", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", choices=["fp32", "bf16"], default="fp32")
    a = ap.parse_args()
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if a.precision == "bf16" else contextlib.nullcontext
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    c = PRESETS[a.preset]
    model = Model(c, a.seq)
    init_weights(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1)
    n_params = sum(p.numel() for p in model.parameters())
    tokens = torch.randint(0, c["vocab"], (a.rows, a.seq + 1))
    x, y = tokens[:, :-1], tokens[:, 1:]
    n = 2048
    dtype = torch.bfloat16 if a.precision == "bf16" else torch.float32
    m1, m2 = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
    best = min((lambda t0: (m1 @ m2, time.perf_counter() - t0)[1])(time.perf_counter()) for _ in range(3))
    best_cpu = min((lambda c0: (m1 @ m2, time.process_time() - c0)[1])(time.process_time()) for _ in range(3))
    peak, cpu_peak = 2 * n ** 3 / best, 2 * n ** 3 / best_cpu
    print(f"torch {torch.__version__}, {a.threads} thread(s), matmul peak (2048^3): {peak / 1e9:.1f} GFLOP/s wall-clock, "
          f"{cpu_peak / 1e9:.1f} GFLOP/s CPU time")
    print(f"model: {a.preset}, {n_params / 1e6:.1f}M parameters, rows {a.rows} x seq {a.seq}, precision {a.precision}")
    flops = a.rows * a.seq * train_flops_per_token(c, a.seq)
    for s in range(a.steps + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        with autocast():
            loss = model(x, y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        t3 = time.perf_counter()
        total, cpu = t3 - t0, time.process_time() - c0
        print(f"{'warmup' if s == 0 else 'step'} {s}: loss {loss.item():.4f} | {total:.2f} s (fwd {t1 - t0:.2f}, "
              f"bwd {t2 - t1:.2f}, opt {t3 - t2:.2f}) | {a.rows * a.seq / total:.0f} tokens/s | "
              f"MFU {100 * flops / total / peak:.1f}% | CPU {cpu:.2f} s, {a.rows * a.seq / cpu:.0f} tokens/CPU-s, "
              f"MFU(CPU) {100 * flops / cpu / cpu_peak:.1f}%")


if __name__ == "__main__":
    main()
