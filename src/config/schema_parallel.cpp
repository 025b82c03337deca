// The [parallel] section of the configuration schema (schema.hpp): the data-parallel strategy, its windows,
// the transport and the element type on the wire. Each entry binds a key to its member of ParallelConfig.
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema parallel_section() {
  using C = Config;
  SectionSchema section{"parallel", "How ranks share the work and which transport carries tensors.", {}};
  section.fields = {
      bind_member(&C::parallel, &ParallelConfig::backend, choice<C>("parallel", "backend", "auto",
           {"auto", "mpi", "nccl"}, "Transport for tensor collectives: auto follows where the tensors live, which "
           "train.device decides (nccl when it resolves to cuda, mpi when it resolves to cpu, whatever GPUs are "
           "visible); nccl with host tensors and mpi with device tensors (this Open MPI is not CUDA-aware) are refused.")),
      bind_member(&C::parallel, &ParallelConfig::progress_us, integer<C>("parallel", "progress_us", 1000, 0, 1000000,
           "Compute polls communication in flight about every this many microseconds (MPI over TCP advances "
           "only inside MPI calls); float products then run in llmtrain's AVX-512 kernels, which poll between "
           "blocks (on CPUs without AVX-512, large products are split into row panels of about this duration at a "
           "nominal 100 GFLOP/s). Either changes the last bits of those products against OpenBLAS's, "
           "deterministically: results stay a function of the configuration and the CPU's instruction set. 0: no "
           "polling, OpenBLAS products.")),
      bind_member(&C::parallel, &ParallelConfig::strategy, choice<C>("parallel", "strategy", "replicated",
           {"replicated", "fsdp", "hsdp"}, "Data parallelism: every rank holds the whole model (replicated), each "
           "rank holds 1/W of every unit (fsdp), or shard groups of shard_group_size ranks, replicated across "
           "groups (hsdp). docs/parallel.md.")),
      bind_member(&C::parallel, &ParallelConfig::shard_group_size, integer<C>("parallel", "shard_group_size", 0, 0,
           kMaxInt, "hsdp: ranks per shard group (consecutive ranks); must divide the rank count. Ignored otherwise.")),
      bind_member(&C::parallel, &ParallelConfig::max_inflight_units, integer<C>("parallel", "max_inflight_units", 2, 1,
           1024, "K, the rate limiter of fsdp/hsdp: at most K units gathered or being gathered at once (with "
           "reshard_after_forward = false: K gathers in flight); the next gather is issued as soon as a slot "
           "frees. Changes timing and memory, never the numbers.")),
      bind_member(&C::parallel, &ParallelConfig::max_inflight_reductions, integer<C>("parallel",
           "max_inflight_reductions", 2, 1, 1024, "R: at most R gradient reductions (reduce-scatter or all-reduce) in flight at once.")),
      bind_member(&C::parallel, &ParallelConfig::reshard_after_forward, boolean<C>("parallel", "reshard_after_forward",
           true, "fsdp/hsdp: free each unit after its forward and gather it again in backward; false keeps units "
           "gathered from forward to backward (more memory, fewer gathers).")),
      bind_member(&C::parallel, &ParallelConfig::comm_dtype, choice<C>("parallel", "comm_dtype", "fp32",
           {"fp32", "bf16"}, "Element type on the wire: bf16 gathers parameters as bf16 casts of the fp32 master "
           "shards and reduces gradients in bf16 (each hop sums in fp32 and rounds once); master weights and "
           "AdamW state stay fp32.")),
      bind_member(&C::parallel, &ParallelConfig::collective_timeout_s, real<C>("parallel", "collective_timeout_s", 600,
           0, 1e7, "NCCL (device tensors): a collective still incomplete this many seconds into a wait means a peer "
           "failed or hangs: the communicator is aborted and the job ends with an error naming the rank and the "
           "operation. 0: wait without limit. MPI (host tensors) ignores it: a failed rank ends the job through "
           "the launcher.")),
  };
  return section;
}

}  // namespace llmtrain::schema
