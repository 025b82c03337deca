#!/usr/bin/env python3
"""transformers loads the export of every imported fixture (tests/golden/hf/) as a user would
(AutoModelForCausalLM, AutoTokenizer) and gives the fixture's reference: the same prompt ids, logits within
1e-5 of the largest, the same greedy tokens. Needs torch and transformers (PyPI reference tools, never
dependencies): ctest registers it only where they import.

Usage: hf_fixtures_transformers_check.py LLMTRAIN_CKPT FIXTURES_DIR WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    tool, fixtures, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    failures = 0
    for name in sorted(os.listdir(fixtures)):
        source = os.path.join(fixtures, name)
        ckpt, hf = os.path.join(work, name, "ckpt"), os.path.join(work, name, "hf")
        reference = json.load(open(os.path.join(source, "reference.json")))
        dtype = "bf16" if reference["saved_dtype"] == "bfloat16" else "fp32"
        subprocess.run([tool, "import", source, "--output", ckpt], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([tool, "export", os.path.join(ckpt, "step_00000000.h5"), "--format", "safetensors",
                        "--dtype", dtype, "--output", hf], check=True, stdout=subprocess.DEVNULL)
        model = AutoModelForCausalLM.from_pretrained(hf, dtype=torch.float32).eval()
        tokenizer = AutoTokenizer.from_pretrained(hf)
        for case in reference["cases"]:
            ids = tokenizer(case["prompt"])["input_ids"]
            with torch.no_grad():
                logits = model(torch.tensor([ids])).logits[0]
                greedy = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                        max_new_tokens=len(case["greedy"]), min_new_tokens=len(case["greedy"]),
                                        do_sample=False)[0, len(ids):].tolist()
            expected = torch.tensor(case["logits"])
            worst = (logits - expected).abs().max().item() if logits.shape == expected.shape else float("inf")
            ok = ids == case["ids"] and worst <= 1e-5 * expected.abs().max().item() and greedy == case["greedy"]
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} ({type(model).__name__}, {dtype}) {case['prompt']!r}: "
                  f"ids {'same' if ids == case['ids'] else ids}, max |logit difference| {worst:.3g}, "
                  f"greedy {'same' if greedy == case['greedy'] else greedy}")
    print("PASS" if failures == 0 else f"FAIL: {failures} cases differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
