// What MPI_THREAD_MULTIPLE costs the training's collectives: all-reduce and all-gather latency at a given thread
// level (asynchronous checkpoints need MULTIPLE; ckpt/background_writer.hpp). perf/ckpt_async_bench.sh runs it
// at both levels in turn.
// Usage: mpirun -np N mpi_thread_level_bench funneled|multiple
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  const bool multiple = argc > 1 && std::strcmp(argv[1], "multiple") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const long floats : {1L, 1024L, 262144L, 4194304L}) {
    std::vector<float> data(std::size_t(floats) * std::size_t(size), 1.0f);
    const int iterations = floats <= 1024 ? 20000 : floats <= 262144 ? 400 : 40;
    for (const char* op : {"all_reduce", "all_gather"}) {
      std::vector<double> us;
      for (int repeat = 0; repeat < 5; ++repeat) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        for (int i = 0; i < iterations; ++i) {
          if (op[4] == 'r')
            MPI_Allreduce(MPI_IN_PLACE, data.data(), int(floats), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
          else
            MPI_Allgather(MPI_IN_PLACE, int(floats), MPI_FLOAT, data.data(), int(floats), MPI_FLOAT, MPI_COMM_WORLD);
        }
        us.push_back((MPI_Wtime() - start) / iterations * 1e6);
      }
      std::sort(us.begin(), us.end());
      if (rank == 0)
        std::printf("{\"level\":\"%s\",\"provided\":%d,\"ranks\":%d,\"op\":\"%s\",\"bytes\":%ld,\"median_us\":%.2f}\n",
                    multiple ? "multiple" : "funneled", provided, size, op, floats * 4, us[2]);
    }
  }
  MPI_Finalize();
  return 0;
}
