// llmtrain: the SPMD trainer. `mpirun -np N llmtrain [options] input.toml`.
//
// Argument parsing only: the job layer (include/llmtrain/job/) loads the configuration, builds the parts
// and trains.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "llmtrain/config/config.hpp"
#include "llmtrain/core/stop_signal.hpp"
#include "llmtrain/dist/spmd_main.hpp"
#include "llmtrain/job/job.hpp"
#include "llmtrain/job/preflight.hpp"
#include "llmtrain/model/blas_runtime.hpp"
#include "llmtrain/model/gemm.hpp"
#include "llmtrain/model/kernels_isa.hpp"

namespace {

const char* kUsage =
    "usage: llmtrain [options] input.toml\n"
    "\n"
    "Pre-trains a Llama/Granite-style decoder as configured by input.toml; run it under mpirun or srun\n"
    "with one rank per device (or per CPU socket).\n"
    "\n"
    "options:\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and build features and exit\n"
    "  -n, --dry-run         validate the configuration, print it resolved (defaults included), the\n"
    "                        parameter count, a per-rank memory estimate and the device a run would\n"
    "                        use (with train.device = \"cuda\", its device memory estimate), and exit\n"
    "      --world-size N    with --dry-run: estimate memory for N ranks instead of this job's\n"
    "      --set KEY=VALUE   override one configuration key (repeatable; the last one wins), checked like\n"
    "                        the file; relative paths resolve against the working directory:\n"
    "                          --set train.steps=7 --set train.lr=3e-4 --set parallel.backend=mpi\n"
    "                          --set train.run_dir=runs/r2 --set model.tie_embeddings=true\n"
    "                          --set data.datasets.kjv.weight=2     (a dataset by its name)\n"
    "                          --set 'data.datasets.\"web.en\".weight=0.5'   (a name with a dot, quoted)\n"
    "      --preflight       check on every rank what a run needs before it spends its allocation: the\n"
    "                        tokenizer and every corpus file readable, the run directory writable with room\n"
    "                        for checkpoints, a GPU per rank for train.device = \"cuda\", the interfaces in\n"
    "                        NCCL_SOCKET_IFNAME and OMPI_MCA_btl_tcp_if_include present and the ranks\n"
    "                        reachable over them; exits 1 with a diagnosis per problem (run it like the job:\n"
    "                        mpirun/srun)\n"
    "      --config-reference  print the configuration reference (docs/config.md) and exit\n"
    "\n"
    "Configuration keys: docs/config.md. Design: docs/architecture.md.\n";

struct Options {
  bool dry_run = false;
  bool preflight = false;
  int world_size = 0;  // --world-size: ranks the dry run plans for (0: this job's)
  std::string config_path;
  std::vector<std::string> overrides;  // --set section.key=value, in order
};

void print_version() {
  std::printf("llmtrain %s (%s build; collectives: mpi%s)\n", LLMTRAIN_VERSION, LLMTRAIN_BUILD_TYPE,
#ifdef LLMTRAIN_WITH_CUDA
              ", nccl"
#else
              ""
#endif
  );
  const std::string slowdown = llmtrain::model::bf16_slowdown();
  const std::string bf16 = !llmtrain::model::bf16_supported()
                               ? "emulated (no AVX512_BF16: train.precision = \"bf16\" runs fp32)"
                           : slowdown.empty() ? "AVX512_BF16"
                                              : "AVX512_BF16, slower than fp32 on this CPU (" + slowdown +
                                                    ": keep train.precision = \"fp32\")";
  std::printf("kernels on this CPU: element-wise %s; bf16 products %s; BLAS %s\n", llmtrain::model::elementwise_isa(),
              bf16.c_str(), llmtrain::model::blas_kernel_name().c_str());
}

// Returns the options, or exits for --help/--version/--config-reference and usage errors (before MPI
// starts, so these work without mpirun).
Options parse_arguments(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "-V" || arg == "--version") {
      print_version();
      std::exit(0);
    } else if (arg == "--config-reference") {
      std::fputs(llmtrain::config_reference_markdown().c_str(), stdout);
      std::exit(0);
    } else if (arg == "-n" || arg == "--dry-run") {
      options.dry_run = true;
    } else if (arg == "--preflight") {
      options.preflight = true;
    } else if (arg == "--world-size") {
      char* end = nullptr;
      const long n = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : 0;
      if (i + 1 == argc || *end != '\0' || n < 1 || n > (1 << 24)) {
        std::fprintf(stderr, "llmtrain: --world-size needs a rank count from 1 to 16777216\n\n%s", kUsage);
        std::exit(2);
      }
      options.world_size = int(n);
      ++i;
    } else if (arg == "--set") {
      if (i + 1 == argc) {
        std::fprintf(stderr, "llmtrain: --set needs a value: --set section.key=value\n\n%s", kUsage);
        std::exit(2);
      }
      options.overrides.push_back(argv[++i]);
    } else if (arg.rfind("--set=", 0) == 0) {
      options.overrides.push_back(arg.substr(6));
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "llmtrain: unknown option '%s'\n\n%s", arg.c_str(), kUsage);
      std::exit(2);
    } else if (options.config_path.empty()) {
      options.config_path = arg;
    } else {
      std::fprintf(stderr, "llmtrain: more than one configuration file given ('%s' and '%s')\n\n%s",
                   options.config_path.c_str(), arg.c_str(), kUsage);
      std::exit(2);
    }
  }
  if (options.world_size > 0 && !options.dry_run) {
    std::fprintf(stderr, "llmtrain: --world-size applies to --dry-run only\n\n%s", kUsage);
    std::exit(2);
  }
  if (options.config_path.empty()) {
    std::fprintf(stderr, "llmtrain: no configuration file given\n\n%s", kUsage);
    std::exit(2);
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  // First: a SIGUSR1 / SIGTERM that arrives while MPI starts (Slurm's warning, or a user's early stop) must
  // set the stop flag, not kill the rank by the signal's default action.
  llmtrain::install_stop_signal_handlers();
  llmtrain::model::ensure_fast_blas_kernels(argv);  // may re-execute the program: before anything else slow
  const Options options = parse_arguments(argc, argv);
  return llmtrain::dist::run_spmd(argc, argv, [&](llmtrain::dist::Runtime& runtime) {
    if (options.preflight) return llmtrain::job::run_preflight(options.config_path, options.overrides, runtime);
    return llmtrain::job::run_llmtrain(options.config_path, options.overrides, options.dry_run, runtime,
                                       options.world_size);
  });
}
