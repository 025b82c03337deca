// The device tests of a build without CUDA (llmtrain_gpu_test): nothing to run; exit 77 (skipped) and say why.
#include <cstdio>

int main() {
  std::printf("SKIPPED: this build has no CUDA (configure with LLMTRAIN_ENABLE_CUDA=ON where a toolkit is installed)\n");
  return 77;
}
