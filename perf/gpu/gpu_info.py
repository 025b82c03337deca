#!/usr/bin/env python3
"""Which GPU, driver and CUDA libraries this process's environment loads: the device check's first report
(perf/gpu/check.sh). Loads each library by its SONAME through ctypes, exactly as llmtrain's dynamic loader
resolves it under the same LD_LIBRARY_PATH, and asks the library itself for its version; the file that was
loaded comes from /proc/self/maps. Needs no torch and no GPU: what is absent is reported as absent.

Usage: python3 perf/gpu/gpu_info.py [--json FILE]
Prints one line per item; --json also writes them as one JSON object (check.sh reads `devices`).
"""
import argparse
import ctypes
import json
import os
import sys

# NCCL 2.30 is the release the device check asks about (issue 28): is the machine's NCCL at least that?
NCCL_ASKED = (2, 30)


def loaded_path(fragment):
    """The file of a loaded library whose path holds `fragment`, from this process's memory map."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if fragment in os.path.basename(path):
                    return os.path.realpath(path)
    except OSError:
        pass
    return None


def load(soname):
    try:
        return ctypes.CDLL(soname), None
    except OSError as error:
        return None, str(error)


def driver_info(out):
    lib, error = load("libcuda.so.1")
    if lib is None:
        out["driver"] = {"error": error}
        out["devices"] = []
        return
    version = ctypes.c_int(0)
    status = lib.cuInit(0)
    lib.cuDriverGetVersion(ctypes.byref(version))
    out["driver"] = {"cuda_api": f"{version.value // 1000}.{version.value % 1000 // 10}", "path": loaded_path("libcuda.so")}
    devices = []
    count = ctypes.c_int(0)
    if status != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        out["driver"]["error"] = f"cuInit returned {status}: no usable device"
        out["devices"] = devices
        return
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        lib.cuDeviceGet(ctypes.byref(device), ordinal)
        name = ctypes.create_string_buffer(256)
        lib.cuDeviceGetName(name, 256, device)
        memory = ctypes.c_size_t(0)
        lib.cuDeviceTotalMem_v2(ctypes.byref(memory), device)
        major, minor, sms = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0)
        lib.cuDeviceGetAttribute(ctypes.byref(major), 75, device)  # CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
        lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)  # ..._MINOR
        lib.cuDeviceGetAttribute(ctypes.byref(sms), 16, device)    # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        devices.append({"name": name.value.decode(), "memory_bytes": memory.value,
                        "compute_capability": f"{major.value}.{minor.value}", "multiprocessors": sms.value})
    out["devices"] = devices


def runtime_info(out):
    lib, error = load("libcudart.so.13")
    if lib is None:
        out["cudart"] = {"error": error}
        return
    version = ctypes.c_int(0)
    lib.cudaRuntimeGetVersion(ctypes.byref(version))
    out["cudart"] = {"version": f"{version.value // 1000}.{version.value % 1000 // 10}", "path": loaded_path("libcudart.so")}


def cublas_info(out):
    lib, error = load("libcublas.so.13")
    if lib is None:
        out["cublas"] = {"error": error}
        return
    parts = []
    for kind in range(3):  # MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL (libraryPropertyType)
        value = ctypes.c_int(0)
        lib.cublasGetProperty(kind, ctypes.byref(value))
        parts.append(str(value.value))
    out["cublas"] = {"version": ".".join(parts), "path": loaded_path("libcublas.so")}
    lt, _ = load("libcublasLt.so.13")
    if lt is not None:
        lt.cublasLtGetVersion.restype = ctypes.c_size_t
        out["cublasLt"] = {"version_code": lt.cublasLtGetVersion(), "path": loaded_path("libcublasLt.so")}


def cudnn_info(out):
    lib, error = load("libcudnn.so.9")
    if lib is None:
        out["cudnn"] = {"error": error}
        return
    lib.cudnnGetVersion.restype = ctypes.c_size_t
    code = lib.cudnnGetVersion()  # major * 10000 + minor * 100 + patch since cuDNN 9
    out["cudnn"] = {"version": f"{code // 10000}.{code % 10000 // 100}.{code % 100}", "path": loaded_path("libcudnn.so")}


def nccl_info(out):
    lib, error = load("libnccl.so.2")
    if lib is None:
        out["nccl"] = {"error": error}
        return
    code = ctypes.c_int(0)
    lib.ncclGetVersion(ctypes.byref(code))
    major, minor, patch = code.value // 10000, code.value % 10000 // 100, code.value % 100
    out["nccl"] = {"version": f"{major}.{minor}.{patch}", "path": loaded_path("libnccl.so"),
                   f"at_least_{NCCL_ASKED[0]}_{NCCL_ASKED[1]}": (major, minor) >= NCCL_ASKED}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the findings to this file as JSON")
    args = parser.parse_args()
    out = {}
    for probe in (driver_info, runtime_info, cublas_info, cudnn_info, nccl_info):
        try:
            probe(out)
        except (AttributeError, OSError) as error:  # a library without the symbol asked for
            out[probe.__name__.replace("_info", "")] = {"error": str(error)}
    for ordinal, device in enumerate(out["devices"]):
        print(f"device {ordinal}: {device['name']}, compute capability {device['compute_capability']}, "
              f"{device['multiprocessors']} SMs, {device['memory_bytes'] / 2**30:.1f} GiB")
    if not out["devices"]:
        print("device: none visible")
    for key in ("driver", "cudart", "cublas", "cublasLt", "cudnn", "nccl"):
        item = out.get(key, {})
        if "error" in item and len(item) == 1:
            print(f"{key}: not loaded ({item['error']})")
            continue
        fields = ", ".join(f"{k} {v}" for k, v in item.items() if k != "path")
        print(f"{key}: {fields} ({item.get('path') or 'path unknown'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
