#!/usr/bin/env python3
"""Makes the Hugging Face fixtures of tests/golden/hf/ once, with transformers; the tests read the files and
never need transformers (not a Debian package).

Each fixture is a tiny random model saved by save_pretrained, with a tiny byte-level BPE tokenizer
(Llama 3's framing: <|begin_of_text|> added by the post-processor, <|end_of_text|> as EOS) and
reference.json: the transformers version, the prompts' token ids, transformers' logits for each prompt
(float32, [len, vocab]) and its greedy continuation (token ids, generate(do_sample=False)).

  llama_gqa_untied/       LlamaForCausalLM, 4 query heads over 2 kv heads, untied head, fp32
  llama_bf16_sharded/     the same weights in bf16, saved in shards (model.safetensors.index.json)
  granite_tied/           GraniteForCausalLM, multipliers away from 1, tied embeddings, fp32
  llama3_rope/            LlamaForCausalLM with rope_type "llama3" (scaling visible within the prompts), fp32

Run:  python3 -m venv /tmp/hf && /tmp/hf/bin/pip install torch transformers safetensors
      /tmp/hf/bin/python tests/golden/make_hf_fixtures.py tests/golden/hf
"""
import json
import os
import shutil
import sys

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import (GraniteConfig, GraniteForCausalLM, LlamaConfig, LlamaForCausalLM,
                          PreTrainedTokenizerFast)

VOCAB = 300  # the tokenizer has fewer (padding rows, as published models have)
BOS, EOS = "<|begin_of_text|>", "<|end_of_text|>"
PROMPTS = ["The quick brown fox", "Checkpoints are HDF5 files.", "a"]
NEW_TOKENS = 8


class Float9(float):
    pass


class Float9Encoder(json.JSONEncoder):
    def iterencode(self, o, _one_shot=False):
        return json.encoder._make_iterencode(
            {}, self.default, json.encoder.encode_basestring_ascii, self.indent,
            lambda v: format(v, ".9g"), self.key_separator, self.item_separator, self.sort_keys,
            self.skipkeys, _one_shot)(o, 0)


def make_tokenizer(out):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    text = ["The quick brown fox jumps over the lazy dog. " * 3,
            "Checkpoints are parallel HDF5 files written by every rank.",
            "Pre-training rarely starts from nothing: teams continue from published weights."]
    trainer = trainers.BpeTrainer(vocab_size=290, special_tokens=[BOS, EOS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(text, trainer)
    bos = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B",
                                                       special_tokens=[(BOS, bos)])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token=BOS, eos_token=EOS)
    fast.save_pretrained(out)
    return fast


def llama_config(fast, **extra):
    return LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                       rms_norm_eps=1e-5, tie_word_embeddings=False, bos_token_id=fast.convert_tokens_to_ids(BOS),
                       eos_token_id=fast.convert_tokens_to_ids(EOS), **extra)


def save(name, model, fast, root, dtype=torch.float32, **save_args):
    out = os.path.join(root, name)
    shutil.rmtree(out, ignore_errors=True)
    model = model.to(dtype)
    model.save_pretrained(out, **save_args)
    fast.save_pretrained(out)
    # The reference comes from the saved files loaded in fp32, as the import reads them (casting the model
    # itself would also round its rotary frequencies to bf16).
    model = type(model).from_pretrained(out, dtype=torch.float32).eval()
    cases = []
    for prompt in PROMPTS:
        ids = fast(prompt)["input_ids"]
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
            # An explicit attention mask: inferred from pad_token_id it would hide a BOS that shares its id.
            greedy = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                                    max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, do_sample=False,
                                    pad_token_id=fast.convert_tokens_to_ids(EOS))[0, len(ids):]
            # generate() is greedy decoding with a key/value cache: the same tokens as full-sequence argmax.
            seq = list(ids)
            for _ in range(NEW_TOKENS):
                seq.append(int(model(torch.tensor([seq])).logits[0, -1].argmax()))
            assert seq[len(ids):] == greedy.tolist(), (out, prompt, seq[len(ids):], greedy.tolist())
        # %.9g: enough digits to give back every float32 exactly, fewer bytes than Python's repr.
        cases.append({"prompt": prompt, "ids": ids, "logits": [[Float9(v) for v in row] for row in logits.tolist()],
                      "greedy": [int(t) for t in greedy]})
    with open(os.path.join(out, "reference.json"), "w") as f:
        f.write(json.dumps({"transformers_version": transformers.__version__, "torch_version": torch.__version__,
                            "architecture": type(model).__name__, "saved_dtype": str(dtype).replace("torch.", ""),
                            "new_tokens": NEW_TOKENS, "greedy_stops_at_eos": False, "cases": cases},
                           cls=Float9Encoder) + "\n")
    print(out, sorted(os.listdir(out)))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "hf")
    os.makedirs(root, exist_ok=True)
    tok_dir = os.path.join(root, ".tokenizer")
    fast = make_tokenizer(tok_dir)
    # Large weights so that the multipliers and the rotary scaling visibly move the logits.
    torch.manual_seed(31)
    llama = LlamaForCausalLM(llama_config(fast, initializer_range=0.2)).eval()
    save("llama_gqa_untied", llama, fast, root)
    save("llama_bf16_sharded", llama, fast, root, dtype=torch.bfloat16, max_shard_size="40KB")

    torch.manual_seed(32)
    granite = GraniteForCausalLM(GraniteConfig(
        vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4, max_position_embeddings=64, rms_norm_eps=1e-5, tie_word_embeddings=True,
        embedding_multiplier=1.5, residual_multiplier=0.8, attention_multiplier=0.2, logits_scaling=3.0,
        initializer_range=0.2, bos_token_id=fast.convert_tokens_to_ids(BOS),
        eos_token_id=fast.convert_tokens_to_ids(EOS))).eval()
    save("granite_tied", granite, fast, root)

    torch.manual_seed(33)
    # head_dim 8, rope_theta 100: wavelengths 6.3, 20, 63, 199; original / high = 8 and original / low = 32
    # put one frequency in each of the three bands.
    rope = {"rope_type": "llama3", "factor": 4.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 32, "rope_theta": 100.0}
    llama3 = LlamaForCausalLM(llama_config(fast, initializer_range=0.2, rope_parameters=rope)).eval()
    save("llama3_rope", llama3, fast, root)
    shutil.rmtree(tok_dir)


if __name__ == "__main__":
    main()
