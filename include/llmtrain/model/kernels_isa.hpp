// Which instruction sets the host kernels use on this CPU, for --version and the run's first log lines.
#pragma once

namespace llmtrain::model {

// The variant of the float element-wise kernels (RMSNorm, SwiGLU, cross-entropy, RoPE, attention's softmax
// tiles; AdamW in optim follows the same choice, llmtrain::widest_cpu_isa()) chosen for the running CPU:
// "avx512", "avx2" or "sse2" (the baseline every x86-64 CPU runs).
const char* elementwise_isa();

}  // namespace llmtrain::model
