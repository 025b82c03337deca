"""Reads a llmtrain checkpoint with h5py, an independent HDF5 reader, and checks the format from outside:
every attribute of the run, every dataset readable with its type, and every dataset's stored checksum
recomputed in numpy (sum modulo 2**64 of mix64(i * golden ^ bits of element i)), so the layout documented in
docs/checkpoints.md is what the file holds. Usage: h5py_reference.py CKPT. Exit 77 (ctest: skipped) when h5py
or numpy is not installed; they are reference tools, not dependencies of llmtrain."""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

np.seterr(over="ignore")
M = np.uint64(0xFFFFFFFFFFFFFFFF)


def mix64(x):
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def checksum(values):
    flat = values.reshape(-1)
    unsigned = {1: np.uint8, 4: np.uint32, 8: np.uint64}[flat.dtype.itemsize]
    bits = flat.view(unsigned).astype(np.uint64)
    index = np.arange(flat.size, dtype=np.uint64)
    return int(np.sum(mix64((index * np.uint64(0x9E3779B97F4A7C15)) ^ bits), dtype=np.uint64))


def main(path):
    problems = []
    with h5py.File(path, "r") as f:
        attrs = dict(f.attrs)
        for key in ["step", "tokens_seen", "world_size", "format_version", "tokenizer_fingerprint", "strategy",
                    "config", "corpus", "code_version"]:
            if key not in attrs:
                problems.append(f"attribute {key} missing")
        if attrs.get("format_version") != 1:
            problems.append(f"format_version {attrs.get('format_version')}")
        expected_types = {"model": np.float32, "optim": np.float32, "loader": None, "rng": np.uint64}
        names = []
        f.visititems(lambda name, obj: names.append(name) if isinstance(obj, h5py.Dataset) else None)
        for name in names:
            d = f[name]
            values = d[()]
            values = np.asarray(values)
            top = name.split("/")[0]
            if name == "optim/step":
                ok = values.dtype == np.int64
            elif top == "loader":
                ok = values.dtype == (np.uint64 if name.endswith("offsets") else np.uint8)
            else:
                ok = values.dtype == expected_types[top]
            if not ok:
                problems.append(f"/{name}: unexpected type {values.dtype}")
            stored = int(d.attrs["checksum"])
            computed = checksum(values)
            if stored != computed:
                problems.append(f"/{name}: checksum {computed}, stored {stored}")
        for which in ["train", "eval"]:
            if f"loader/{which}" in f:
                offsets = f[f"loader/{which}/offsets"][()]
                if offsets[0] != 0 or offsets[-1] != f[f"loader/{which}/states"].shape[0]:
                    problems.append(f"/loader/{which}: offsets do not span the states")
        for unit_tensor in [n for n in names if n.startswith("model/")]:
            for moment in ["m", "v"]:
                other = "optim/" + unit_tensor[len("model/"):] + "/" + moment
                if other not in f or f[other].shape != f[unit_tensor].shape:
                    problems.append(f"/{other}: missing or shaped unlike /{unit_tensor}")
    for p in problems:
        print(p)
    print(f"{len(names)} datasets and {len(attrs)} attributes read with h5py {h5py.__version__}: {len(problems)} problems")
    print("PASS" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
