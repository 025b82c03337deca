// What one rank sees of CUDA devices, for choosing where it trains (train.device; src/job/device_choice.hpp):
// how many devices this process sees, its place among the ranks of its node, and the device it would drive.
// One rank per GPU, in either of the two ways launchers give it: every rank of a node sees all of its GPUs and
// the node's local rank r (MPI_COMM_TYPE_SHARED, dist::Runtime) drives device r, so the node needs as many
// visible devices as ranks; or the launcher narrowed each rank's CUDA_VISIBLE_DEVICES to one GPU of its own
// (Slurm's --gpus-per-task=1), which the rank sees as device 0. Ranks are never doubled up on a device.
//
// The CUDA calls live in src/dist/cuda/device_query.cpp; a build without CUDA answers from
// src/dist/device_query_host.cpp (no devices).
#pragma once

#include <cstdint>
#include <string>

#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::dist {

struct DeviceQuery {
  bool cuda_build = false;  // built with LLMTRAIN_ENABLE_CUDA=ON
  int device_count = 0;     // CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applied)
  int local_rank = 0;       // this rank among the ranks of its node
  int local_ranks = 1;      // ranks on this node
  std::string reason;       // why device_count is 0 where the runtime said why ("no CUDA-capable device is
                            // detected"); "" otherwise
  bool own_device = false;  // CUDA_VISIBLE_DEVICES names one device, and this process sees it
  // The device this rank would drive: 0 with own_device, else local_rank when local_rank < device_count.
  int device = -1;
  std::string name;         // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;   // "0000:1B:00.0" (cudaDeviceGetPCIBusId): which physical GPU it is
  std::uint64_t total_bytes = 0, free_bytes = 0;  // cudaMemGetInfo on that device
  int cc_major = 0, cc_minor = 0;                 // compute capability
  int sm_count = 0;                               // streaming multiprocessors
  bool has_device() const { return device >= 0; }
};

// This rank's view. Not collective. Where the rank has a device, that device becomes the current one of the
// calling thread and holds a CUDA context from here on (cudaMemGetInfo needs one): the device the training
// then runs on. A CUDA runtime that cannot start (no driver) counts as 0 devices, with its message in reason.
DeviceQuery query_devices(const Runtime& runtime);

}  // namespace llmtrain::dist
