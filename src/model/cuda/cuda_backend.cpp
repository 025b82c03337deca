// The CUDA backend (cuda_backend.hpp): each operation of backend.hpp is one launcher of device_ops.hpp or
// attention_kernels.hpp (or a cuBLAS product), enqueued on the process's one compute stream
// (compute_stream.hpp) and returning at once. Nothing here waits on the whole device: what must wait (a
// copy to the host, the loss, a phase's timing) waits on the compute stream, and other streams (the stores'
// communication) order themselves against it with events. Kokkos plays no part in the device path.
//
// Memory is plain cudaMalloc (never managed memory: every byte's place is explicit), zeroed on the stream,
// counted by Memory and reported to the process's tracker (allocation_report.hpp). A free first waits for
// the stream, whose queued work may still read the buffer; frees are rare (a new micro-batch shape).
// Copies to the device of up to StagedUpload::kMaxBytes (a micro-batch's ids) go through pinned staging
// buffers on a copy stream ordered against the compute stream with events (staged_upload.hpp); larger ones
// (parameters at start-up) and copies to the host use cudaMemcpyAsync on the compute stream with pageable
// host memory: CUDA stages a pageable source before returning, so the host may reuse it at once.
#include "cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "../attention_shape.hpp"
#include "allocation_report.hpp"
#include "attention_kernels.hpp"
#include "compute_stream.hpp"
#include "cuda_check.hpp"
#include "device_ops.hpp"
#include "staged_upload.hpp"

namespace llmtrain::model::cuda {
namespace {

class CudaBackend final : public Backend<float> {
 public:
  Device device() const override { return Device::Cuda; }

  void copy_from_host(void* dst, const void* host, Index bytes) override {
    if (bytes <= StagedUpload::kMaxBytes) return upload_.copy(dst, host, bytes);
    check_cuda(cudaMemcpyAsync(dst, host, std::size_t(bytes), cudaMemcpyHostToDevice, compute_stream()),
               "cudaMemcpyAsync (host to device)");
  }
  void copy_to_host(void* host, const void* src, Index bytes) override {
    check_cuda(cudaMemcpyAsync(host, src, std::size_t(bytes), cudaMemcpyDeviceToHost, compute_stream()),
               "cudaMemcpyAsync (device to host)");
    synchronize();
  }

  void embedding_forward(float* out, const float* table, const std::int32_t* tokens, Index rows,
                         Index dim) override {
    cuda::embedding_forward(out, table, tokens, rows, dim, compute_stream());
  }
  void embedding_backward(float* dtable, const float* dout, const std::int32_t* tokens, Index rows,
                          Index dim) override {
    cuda::embedding_backward(dtable, dout, tokens, rows, dim, compute_stream());
  }
  void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, Index rows, Index dim,
                       double eps) override {
    cuda::rmsnorm_forward(out, rstd, x, w, rows, dim, eps, compute_stream());
  }
  void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w, const float* rstd,
                        Index rows, Index dim) override {
    cuda::rmsnorm_backward(dx, dw, dout, x, w, rstd, rows, dim, compute_stream());
  }
  void rope_apply(float* qk, const float* cos_table, const float* sin_table, Index rows, Index seq_len, Index width,
                  Index rotated_heads, Index head_dim, int direction) override {
    cuda::rope_apply(qk, cos_table, sin_table, rows, seq_len, width, rotated_heads, head_dim, direction,
                     compute_stream());
  }
  void swiglu_forward(float* out, const float* h13, Index rows, Index hidden) override {
    cuda::swiglu_forward(out, h13, rows, hidden, compute_stream());
  }
  void swiglu_backward(float* dh13, const float* dout, const float* h13, Index rows, Index hidden) override {
    cuda::swiglu_backward(dh13, dout, h13, rows, hidden, compute_stream());
  }
  void copy(float* dst, const float* src, Index n) override { cuda::copy(dst, src, n, compute_stream()); }
  void scale(float* x, float factor, Index n) override { cuda::scale(x, factor, n, compute_stream()); }
  void fill(float* dst, float value, Index n) override { cuda::fill(dst, value, n, compute_stream()); }
  void cross_entropy_rows(float* logits, float* loss, const std::int32_t* targets, Index rows, Index vocab,
                          std::int32_t ignore_index, float grad_scale, bool want_grad) override {
    cuda::cross_entropy_rows(logits, loss, targets, rows, vocab, ignore_index, grad_scale, want_grad,
                             compute_stream());
  }
  LossSum loss_sum(const float* loss, const std::int32_t* targets, Index n, std::int32_t ignore_index) override {
    cuda::loss_sum(sum_.data(), count_.data(), loss, targets, n, ignore_index, compute_stream());
    LossSum result;
    check_cuda(cudaMemcpyAsync(&result.sum, sum_.data(), sizeof result.sum, cudaMemcpyDeviceToHost,
                               compute_stream()),
               "cudaMemcpyAsync (loss sum to host)");
    check_cuda(cudaMemcpyAsync(&result.count, count_.data(), sizeof result.count, cudaMemcpyDeviceToHost,
                               compute_stream()),
               "cudaMemcpyAsync (loss count to host)");
    synchronize();
    return result;
  }

  void attention_forward(const AttentionShape& shape, float* out, float* lse, const float* qkv,
                         const std::int32_t* doc, Precision precision) override {
    cuda::attention_forward(shape, out, lse, qkv, doc, precision, compute_stream());
  }
  void attention_backward(const AttentionShape& shape, float* dqkv, const float* dout, const float* out,
                          const float* lse, const float* qkv, const std::int32_t* doc, Precision precision) override {
    const Index elements = attention_backward_workspace_elements(shape);
    if (workspace_.size() != elements) {
      workspace_ = Buffer<float>();  // the last shape's goes before the next one's comes
      workspace_ = Buffer<float>(*this, elements, "attention workspace");
    }
    cuda::attention_backward(shape, dqkv, dout, out, lse, qkv, doc, workspace_.data(), precision, compute_stream());
  }

  void gemm(Trans trans_a, Trans trans_b, Index m, Index n, Index k, float alpha, const float* a, Index lda,
            const float* b, Index ldb, float beta, float* c, Index ldc, Precision precision, bool) override {
    cuda::gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, compute_stream());
  }
  // cuBLAS reads op(B) as it is: nothing to keep between products yet.
  void begin_reuse(const float*) override {}
  void end_reuse() override {}

  void synchronize() override { check_cuda(cudaStreamSynchronize(compute_stream()), "cudaStreamSynchronize"); }

 private:
  void* allocate_zeroed(Index bytes, const char* label) override {
    void* data = nullptr;
    const std::string what = std::string("cudaMalloc of ") + std::to_string(bytes) + " bytes for " + label;
    check_cuda(cudaMalloc(&data, std::size_t(bytes)), what.c_str());
    check_cuda(cudaMemsetAsync(data, 0, std::size_t(bytes), compute_stream()), "cudaMemsetAsync");
    report_device_allocation(label, data, bytes);
    return data;
  }
  // A destructor cannot throw: a failure here is reported on stderr (CUDA's error stays sticky, so the next
  // checked call fails too).
  void release(void* data, Index bytes) noexcept override {
    const cudaError_t waited = cudaStreamSynchronize(compute_stream());
    const cudaError_t freed = cudaFree(data);
    if (waited != cudaSuccess || freed != cudaSuccess)
      std::fprintf(stderr, "llmtrain: freeing a device buffer of %lld bytes failed: %s\n",
                   static_cast<long long>(bytes), cudaGetErrorString(waited != cudaSuccess ? waited : freed));
    report_device_free(data, bytes);
  }

  StagedUpload upload_;  // before the buffers: it outlives their frees, which wait for the compute stream
  Buffer<double> sum_{*this, 1, "loss sum"};
  Buffer<std::int64_t> count_{*this, 1, "loss count"};
  Buffer<float> workspace_;  // attention_backward's, for the last shape
};

}  // namespace

std::unique_ptr<Backend<float>> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace llmtrain::model::cuda
