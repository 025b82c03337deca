"""Checks what `llmtrain-ckpt export` writes beside the tensors, with the standard library only (CI has no
transformers): config.json and generation_config.json name the id documents were framed with (GPT-2's
<|endoftext|>, 50256; no BOS), tokenizer_config.json names PreTrainedTokenizerFast and that token, the
exported tokenizer.json encodes the test corpus exactly as the run's tokenizer does (llmtrain-tokenize with
either), and a sharded export (--max-shard-bytes) holds every tensor of the single-file export once, byte for
byte, within the shard size, named by model.safetensors.index.json.
Usage: export_files_check.py SHARDED_DIR SINGLE_DIR MAX_SHARD_BYTES LLMTRAIN_TOKENIZE SOURCE_TOKENIZER CORPUS"""
import json
import os
import struct
import subprocess
import sys


def tensors(path):
    """name -> bytes of each tensor of a safetensors file."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    return {name: data[t["data_offsets"][0]:t["data_offsets"][1]] for name, t in header.items()
            if name != "__metadata__"}


def main(sharded, single, max_bytes, tokenize, source_tokenizer, corpus):
    problems = []
    def expect(ok, what):
        if not ok:
            problems.append(what)
    load = lambda d, name: json.load(open(os.path.join(d, name)))
    for d in (sharded, single):
        config, generation = load(d, "config.json"), load(d, "generation_config.json")
        expect(config["eos_token_id"] == 50256 and config["bos_token_id"] is None, f"{d}/config.json: ids {config}")
        expect(generation["eos_token_id"] == 50256 and generation["bos_token_id"] is None,
               f"{d}/generation_config.json: {generation}")
        tok_config = load(d, "tokenizer_config.json")
        expect(tok_config["tokenizer_class"] == "PreTrainedTokenizerFast" and tok_config["eos_token"] == "<|endoftext|>",
               f"{d}/tokenizer_config.json: {tok_config}")
    reference = tensors(os.path.join(single, "model.safetensors"))
    index = load(sharded, "model.safetensors.index.json")
    files = sorted(set(index["weight_map"].values()))
    expect(len(files) >= 2, f"{len(files)} shard files for {max_bytes} bytes a shard")
    expect(not os.path.exists(os.path.join(sharded, "model.safetensors")), "a sharded export also has model.safetensors")
    seen = {}
    for f in files:
        shard = tensors(os.path.join(sharded, f))
        size = sum(len(b) for b in shard.values())
        expect(size <= max_bytes or len(shard) == 1, f"{f}: {size} bytes in {len(shard)} tensors")
        for name, data in shard.items():
            expect(name not in seen, f"{name} in {f} and {seen.get(name)}")
            expect(index["weight_map"].get(name) == f, f"the index puts {name} in {index['weight_map'].get(name)}, not {f}")
            expect(data == reference.get(name), f"{name} in {f} differs from the single-file export")
            seen[name] = f
    expect(set(seen) == set(reference), f"tensors missing from the shards: {sorted(set(reference) - set(seen))}")
    expect(index["metadata"]["total_size"] == sum(len(b) for b in reference.values()), f"total_size {index['metadata']}")
    encode = lambda t: subprocess.run([tokenize, "--tokenizer", t, corpus], check=True, capture_output=True).stdout
    ours, exported = encode(source_tokenizer), encode(os.path.join(sharded, "tokenizer.json"))
    expect(ours == exported and ours.count(b"\n") > 10, "the exported tokenizer.json encodes the corpus differently")
    documents = ours.count(b"\n")
    print(f"{len(reference)} tensors in {len(files)} shards; {documents} documents encoded alike; {len(problems)} problems")
    for p in problems:
        print("  " + p)
    print("PASS" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:7]))
