"""Loads `llmtrain-ckpt export` output with transformers (LlamaForCausalLM from the exported config.json and
model.safetensors) and compares its logits with llmtrain's own forward pass on the same tokens (the
.logits file written by `ckpt_job_probe logits`). Usage: hf_export_check.py EXPORT_DIR LOGITS_FILE [TOLERANCE].
Exits 77 when torch or transformers is not installed (reference tools, not dependencies; ctest registers
this check only where they are)."""
import struct
import sys

try:
    import numpy as np
    import torch
    from transformers import LlamaForCausalLM
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)


def main(export_dir, logits_path, tolerance):
    with open(logits_path, "rb") as f:
        n, vocab = struct.unpack("<qq", f.read(16))
        tokens = np.frombuffer(f.read(4 * n), dtype=np.int32)
        ours = np.frombuffer(f.read(4 * n * vocab), dtype=np.float32).reshape(n, vocab)
    model = LlamaForCausalLM.from_pretrained(export_dir, torch_dtype=torch.float32)
    model.eval()
    with torch.no_grad():
        theirs = model(torch.tensor(tokens, dtype=torch.long)[None, :]).logits[0].numpy()
    diff = float(np.max(np.abs(theirs - ours)))
    scale = float(np.max(np.abs(ours)))
    print(f"{n} positions x {vocab} logits: max |transformers - llmtrain| = {diff:.3e} (max |logit| {scale:.3e})")
    print("PASS" if diff <= tolerance else "FAIL")
    return 0 if diff <= tolerance else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1e-3))
