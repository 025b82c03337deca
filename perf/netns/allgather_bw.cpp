// All-gather bandwidth between ranks, as nccl-tests reports it: the netns harness's proof that its links
// run at the configured rate. Each rank contributes BYTES / W; the time of one MPI_Allgather of BYTES in
// total gives algbw = BYTES / t and busbw = algbw * (W - 1) / W, the rate each rank's link carried.
// Usage: allgather_bw [BYTES (default 64 MiB)] [ITERATIONS (default 5)]; rank 0 prints one line per size.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const long total = argc > 1 ? std::atol(argv[1]) : 64L << 20;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 5;
  if (total < world || iterations < 1) {
    if (rank == 0) std::fprintf(stderr, "allgather_bw: BYTES must be >= world size and ITERATIONS >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long part = total / world;
  std::vector<char> send(static_cast<size_t>(part), static_cast<char>(rank));
  std::vector<char> recv(static_cast<size_t>(part * world));
  // One warm-up call opens the TCP connections; the best of the timed calls is reported (the others
  // include scheduling noise from the shared cores, not the link).
  MPI_Allgather(send.data(), static_cast<int>(part), MPI_CHAR, recv.data(), static_cast<int>(part), MPI_CHAR,
                MPI_COMM_WORLD);
  double best = 1e30;
  for (int it = 0; it < iterations; ++it) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Allgather(send.data(), static_cast<int>(part), MPI_CHAR, recv.data(), static_cast<int>(part), MPI_CHAR,
                  MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, t);
  }
  for (int r = 0; r < world; ++r) {
    if (recv[static_cast<size_t>(r * part)] != static_cast<char>(r)) {
      std::fprintf(stderr, "allgather_bw: rank %d received wrong data from rank %d\n", rank, r);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  char host[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(host, &len);
  if (rank == 0) {
    const double algbw = static_cast<double>(part * world) * 8 / best / 1e9;
    std::printf("allgather W=%d bytes=%ld time=%.4f s algbw=%.3f Gbit/s busbw=%.3f Gbit/s (rank 0 on %s)\n",
                world, part * world, best, algbw, algbw * (world - 1) / world, host);
  }
  MPI_Finalize();
  return 0;
}
