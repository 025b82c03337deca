// The decoder's forward and backward passes, one block at a time (see model.hpp).
//
// Reading order: forward_backward() -> embed -> block_forward (per layer) -> final norm -> head_loss
// (chunked output head fused with cross-entropy and its backward) -> block_backward (per layer, reversed)
// -> embedding backward. Every operation, matrix products included, is one call of the backend
// (backend.hpp), on buffers in its memory; the model itself touches no element.
#include "llmtrain/model/model.hpp"

#include <cmath>
#include <optional>
#include <type_traits>

#include "activations.hpp"
#include "attention.hpp"
#include "llmtrain/core/comm_progress.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/core/timer.hpp"
#include "llmtrain/model/decoder.hpp"
#include "llmtrain/model/param_units.hpp"

namespace llmtrain::model {

using Index = std::int64_t;

Recompute parse_recompute(const std::string& name) {
  if (name == "none") return Recompute::None;
  if (name == "blocks") return Recompute::Blocks;
  LLMTRAIN_FAIL("train.recompute must be \"none\" or \"blocks\", got \"", name, "\"");
}

namespace {
constexpr Index kHeadChunkRows = 256;  // rows of logits alive at once in the output head
}  // namespace

template <typename T>
struct Model<T>::State {
  explicit State(std::unique_ptr<Backend<T>> own) : own_backend(std::move(own)), backend(own_backend.get()) {}
  explicit State(Backend<T>& shared) : backend(&shared) {}
  // What the constructor sets up: the configuration, the unit layouts and the RoPE tables.
  void init(const ModelConfig& config, Recompute recompute, UnitAccess<T>& units, Precision precision);

  std::unique_ptr<Backend<T>> own_backend;  // a host backend of the model's own, or null; outlives the buffers
  Backend<T>* backend;
  ModelConfig config;
  Recompute recompute;
  Precision precision;
  UnitAccess<T>* units = nullptr;
  std::vector<UnitLayout> layouts;
  std::vector<const T*> param;  // per unit: its parameters while acquired, else null
  std::vector<T*> grad;         // per unit: its gradient buffer between gradient() and grad_ready(), else null
  Buffer<T> rope_cos, rope_sin;  // [max_seq_len, head_dim / 2]

  // Buffers for the current micro-batch shape (rebuilt when the shape changes).
  Index batch = 0, seq = 0;
  Buffer<std::int32_t> tokens, targets, doc;
  bool use_doc = false;
  std::vector<Buffer<T>> resid;                   // n_layers + 1 residual-stream tensors [n, dim]
  std::vector<BlockActivations<T>> acts;          // n_layers, or 1 with recompute = blocks
  std::optional<BackwardScratch<T>> scratch;
  Buffer<T> final_x, final_rstd, head_logits, row_loss;
  PassTimes times;
  KvCache<T>* cache = nullptr;  // during decode(): where keys and values go (decoder.hpp)

  Index n() const { return batch * seq; }
  AttentionShape attention() const { return attention_shape(config, batch, seq); }
  // Every product of the model, in the model's precision; with reuse_b, B is the matrix of the open
  // begin_reuse (backend.hpp).
  void mm(Trans ta, Trans tb, Index m, Index n, Index k, T alpha, const T* a, Index lda, const T* b, Index ldb,
          T beta, T* c, Index ldc, bool reuse_b = false) {
    backend->gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, precision, reuse_b);
  }
  // Seconds since `watch` started, once the work queued before has finished.
  double fenced_seconds(const Stopwatch& watch) {
    backend->synchronize();
    return watch.seconds();
  }
  BlockActivations<T>& acts_for(Index layer) { return acts[recompute == Recompute::Blocks ? 0 : layer]; }
  const T* acquired(Index unit) const {
    LLMTRAIN_CHECK(param[unit], "model read unit ", layouts[unit].name, " without acquiring it");
    return param[unit];
  }
  T* gradient(Index unit) {
    if (!grad[unit]) grad[unit] = units->gradient(int(unit));
    return grad[unit];
  }
  const T* w(Index unit, const char* name) const { return acquired(unit) + layouts[unit].tensor(name).offset; }
  T* g(Index unit, const char* name) { return gradient(unit) + layouts[unit].tensor(name).offset; }
  // A block's fused matrices (UnitLayout::fused checks that their parts are stacked): wq, wk, wv as one
  // [qkv_width, d_model] matrix for the QKV product, w1 and w3 as one [2 d_ff, d_model] for the gate and up
  // products.
  Index qkv_offset = 0, w13_offset = 0;
  const T* w_qkv(Index unit) const { return acquired(unit) + qkv_offset; }
  T* g_qkv(Index unit) { return gradient(unit) + qkv_offset; }
  const T* w_13(Index unit) const { return acquired(unit) + w13_offset; }
  T* g_13(Index unit) { return gradient(unit) + w13_offset; }
  void acquire(Index unit) { param[unit] = units->acquire(int(unit)); }
  void release(Index unit) {
    param[unit] = nullptr;
    units->release(int(unit));
  }
  void grad_ready(Index unit) {
    grad[unit] = nullptr;
    units->grad_ready(int(unit));
  }
  const T* head_weight() const { return config.tie_embeddings ? w(0, "tok_embedding") : w(head_unit(), "output"); }
  T* head_grad() { return config.tie_embeddings ? g(0, "tok_embedding") : g(head_unit(), "output"); }
  Index head_unit() const { return config.n_layers + 1; }

  void prepare(const Batch& b);
  void embed();
  void forward_blocks();
  // The head's unit, and the embedding too when tied, are acquired around head_pass.
  void acquire_head();
  void release_head();
  void block_forward(Index layer);
  void attend(Index layer, BlockActivations<T>& a);
  void block_backward(Index layer, T* d_out, T* d_in);
  LossSum final_and_head(bool want_grad, T grad_scale_per_token, T* logits_out);
};

template <typename T>
void Model<T>::State::prepare(const Batch& b) {
  const auto& c = config;
  LLMTRAIN_CHECK(b.rows > 0 && b.seq_len > 0, "batch has no tokens (rows = ", b.rows, ", seq_len = ", b.seq_len, ")");
  LLMTRAIN_CHECK(b.seq_len <= c.max_seq_len, "batch seq_len ", b.seq_len, " exceeds model.max_seq_len ", c.max_seq_len);
  LLMTRAIN_CHECK(Index(b.tokens.size()) == b.rows * b.row_width(), "batch holds ", b.tokens.size(),
                 " tokens, expected rows * (seq_len + 1) = ", b.rows * b.row_width());
  if (b.rows != batch || b.seq_len != seq) {
    batch = b.rows;
    seq = b.seq_len;
    Backend<T>& m = *backend;
    tokens = Buffer<std::int32_t>(m, n(), "tokens");
    targets = Buffer<std::int32_t>(m, n(), "targets");
    doc = Buffer<std::int32_t>(m, n(), "doc");
    resid.clear();
    for (Index l = 0; l <= c.n_layers; ++l) resid.emplace_back(m, n() * c.d_model, "resid");
    acts.clear();
    const Index kept = recompute == Recompute::Blocks ? 1 : c.n_layers;
    for (Index l = 0; l < kept; ++l) acts.emplace_back(m, c, batch, seq);
    scratch.emplace(m, c, n());
    final_x = Buffer<T>(m, n() * c.d_model, "final_x");
    final_rstd = Buffer<T>(m, n(), "final_rstd");
    head_logits = Buffer<T>(m, std::min(kHeadChunkRows, n()) * c.vocab_size, "head_logits");
    row_loss = Buffer<T>(m, n(), "row_loss");
  }
  const std::size_t count = std::size_t(n());
  std::vector<std::int32_t> tok(count), tgt(count), dc(count);
  use_doc = c.mask_documents && !b.doc_index.empty();
  LLMTRAIN_CHECK(!use_doc || b.doc_index.size() == b.tokens.size(), "batch doc_index has ", b.doc_index.size(),
                 " entries, expected ", b.tokens.size());
  for (Index r = 0; r < batch; ++r) {
    for (Index t = 0; t < seq; ++t) {
      const std::size_t i = std::size_t(r * seq + t), src = std::size_t(r * b.row_width() + t);
      tok[i] = b.tokens[src];
      tgt[i] = b.tokens[src + 1];
      dc[i] = use_doc ? b.doc_index[src] : 0;
      LLMTRAIN_CHECK(tok[i] >= 0 && tok[i] < c.vocab_size, "batch token id ", tok[i], " at row ", r, " position ", t,
                     " is outside the vocabulary [0, ", c.vocab_size, ")");
      LLMTRAIN_CHECK(tgt[i] == c.ignore_index || (tgt[i] >= 0 && tgt[i] < c.vocab_size), "batch target id ", tgt[i],
                     " at row ", r, " position ", t + 1, " is outside the vocabulary [0, ", c.vocab_size, ")");
    }
  }
  tokens.copy_from_host(tok);
  targets.copy_from_host(tgt);
  doc.copy_from_host(dc);
}

template <typename T>
void Model<T>::State::embed() {
  acquire(0);
  backend->embedding_forward(resid[0].data(), w(0, "tok_embedding"), tokens.data(), n(), config.d_model);
  if (config.embedding_multiplier != 1.0)
    backend->scale(resid[0].data(), T(config.embedding_multiplier), n() * config.d_model);
  release(0);
}

template <typename T>
void Model<T>::State::forward_blocks() {
  for (Index l = 0; l < config.n_layers; ++l) {
    acquire(l + 1);
    block_forward(l);
    release(l + 1);
  }
}

template <typename T>
void Model<T>::State::acquire_head() {
  acquire(head_unit());
  if (config.tie_embeddings) acquire(0);
}

template <typename T>
void Model<T>::State::release_head() {
  if (config.tie_embeddings) release(0);
  release(head_unit());
}

template <typename T>
void Model<T>::State::block_forward(Index layer) {
  const auto& c = config;
  const Index u = layer + 1, N = n(), D = c.d_model, F = c.d_ff, W = c.qkv_width();
  const T r = T(c.residual_multiplier);
  auto& a = acts_for(layer);
  const T* x = resid[layer].data();
  // Attention half: mid = x + r wo(attention(rope(wqkv(norm(x))))), r the residual multiplier (1 for Llama)
  backend->rmsnorm_forward(a.xn1.data(), a.rstd1.data(), x, w(u, "attn_norm"), N, D, c.norm_eps);
  mm(Trans::No, Trans::Yes, N, W, D, T(1), a.xn1.data(), D, w_qkv(u), D, T(0), a.qkv.data(), W);
  attend(layer, a);
  poll_progress();
  backend->copy(a.mid.data(), x, N * D);
  mm(Trans::No, Trans::Yes, N, D, D, r, a.attn.data(), D, w(u, "wo"), D, T(1), a.mid.data(), D);
  // MLP half: out = mid + r w2(silu(w1(norm(mid))) * w3(norm(mid)))
  backend->rmsnorm_forward(a.xn2.data(), a.rstd2.data(), a.mid.data(), w(u, "ffn_norm"), N, D, c.norm_eps);
  mm(Trans::No, Trans::Yes, N, 2 * F, D, T(1), a.xn2.data(), D, w_13(u), D, T(0), a.h13.data(), 2 * F);
  backend->swiglu_forward(a.hg.data(), a.h13.data(), N, F);
  T* out = resid[layer + 1].data();
  backend->copy(out, a.mid.data(), N * D);
  mm(Trans::No, Trans::Yes, N, D, F, r, a.hg.data(), F, w(u, "w2"), F, T(1), out, D);
}

// Rotary embedding and attention: over the batch's own positions (training, and a decoder's prefill, which
// keeps the keys and values), or a decoder's step over its cache.
template <typename T>
void Model<T>::State::attend(Index layer, BlockActivations<T>& a) {
  const auto& c = config;
  if (cache && !cache->empty())
    return cache->step(layer, a.attn.data(), a.qkv.data(), batch, rope_cos.data(), rope_sin.data(), precision);
  backend->rope_apply(a.qkv.data(), rope_cos.data(), rope_sin.data(), n(), seq, c.qkv_width(),
                      c.n_heads + c.n_kv_heads, c.head_dim(), +1);
  backend->attention_forward(attention(), a.attn.data(), a.lse.data(), a.qkv.data(), use_doc ? doc.data() : nullptr,
                             precision);
  if (cache) cache->store(layer, a.qkv.data(), batch, seq);
}

// d_out: gradient w.r.t. the block's output; d_in receives the gradient w.r.t. its input (overwritten).
template <typename T>
void Model<T>::State::block_backward(Index layer, T* d_out, T* d_in) {
  const auto& c = config;
  const Index u = layer + 1, N = n(), D = c.d_model, F = c.d_ff, W = c.qkv_width();
  if (recompute == Recompute::Blocks) block_forward(layer);
  const T r = T(c.residual_multiplier);  // scales the branch outputs: their gradients carry it too
  auto& a = acts_for(layer);
  auto& s = *scratch;
  const T* x = resid[layer].data();
  // MLP half. The residual passes d_out straight to mid.
  T* d_mid = s.d_mid.data();
  backend->copy(d_mid, d_out, N * D);
  mm(Trans::No, Trans::No, N, F, D, r, d_out, D, w(u, "w2"), F, T(0), s.d_hg.data(), F);
  mm(Trans::Yes, Trans::No, D, F, N, r, d_out, D, a.hg.data(), F, T(1), g(u, "w2"), F);
  backend->swiglu_backward(s.d_h13.data(), s.d_hg.data(), a.h13.data(), N, F);
  mm(Trans::No, Trans::No, N, D, 2 * F, T(1), s.d_h13.data(), 2 * F, w_13(u), D, T(0), s.d_xn.data(), D);
  mm(Trans::Yes, Trans::No, 2 * F, D, N, T(1), s.d_h13.data(), 2 * F, a.xn2.data(), D, T(1), g_13(u), D);
  backend->rmsnorm_backward(d_mid, g(u, "ffn_norm"), s.d_xn.data(), a.mid.data(), w(u, "ffn_norm"), a.rstd2.data(),
                            N, D);
  // Attention half.
  backend->copy(d_in, d_mid, N * D);
  mm(Trans::No, Trans::No, N, D, D, r, d_mid, D, w(u, "wo"), D, T(0), s.d_attn.data(), D);
  mm(Trans::Yes, Trans::No, D, D, N, r, d_mid, D, a.attn.data(), D, T(1), g(u, "wo"), D);
  backend->attention_backward(attention(), s.d_qkv.data(), s.d_attn.data(), a.attn.data(), a.lse.data(),
                              a.qkv.data(), use_doc ? doc.data() : nullptr, precision);
  poll_progress();
  backend->rope_apply(s.d_qkv.data(), rope_cos.data(), rope_sin.data(), N, seq, W, c.n_heads + c.n_kv_heads,
                      c.head_dim(), -1);
  mm(Trans::No, Trans::No, N, D, W, T(1), s.d_qkv.data(), W, w_qkv(u), D, T(0), s.d_xn.data(), D);
  mm(Trans::Yes, Trans::No, W, D, N, T(1), s.d_qkv.data(), W, a.xn1.data(), D, T(1), g_qkv(u), D);
  backend->rmsnorm_backward(d_in, g(u, "attn_norm"), s.d_xn.data(), x, w(u, "attn_norm"), a.rstd1.data(), N, D);
}

// Final norm, then the output head and cross-entropy in chunks of rows: only kHeadChunkRows x vocab logits
// exist at a time. With want_grad the chunk's logits turn into their gradient in place, which immediately
// yields the chunk's input gradient (into scratch d_resid_a) and adds to the head weight's gradient.
template <typename T>
LossSum Model<T>::State::final_and_head(bool want_grad, T grad_scale_per_token, T* logits_out) {
  const auto& c = config;
  const Index N = n(), D = c.d_model, V = c.vocab_size;
  const T inv_scaling = T(1.0 / c.logits_scaling);  // Granite's logits_scaling divides the logits (1 for Llama)
  backend->rmsnorm_forward(final_x.data(), final_rstd.data(), resid[c.n_layers].data(), w(head_unit(), "final_norm"),
                           N, D, c.norm_eps);
  T* d_final = want_grad ? scratch->d_mid.data() : nullptr;
  // The head's weight is op(B) of every chunk's logits and input gradient, unchanged while the head is
  // acquired: the backend may prepare it once per pass (the host packs bf16 copies: reused_operand.cpp says
  // why that is enough).
  const bool reuse_head = N > kHeadChunkRows;
  if (reuse_head) backend->begin_reuse(head_weight());
  struct EndReuse {  // with the pass, even when it throws
    Backend<T>* backend;
    ~EndReuse() {
      if (backend) backend->end_reuse();
    }
  } const end_reuse{reuse_head ? backend : nullptr};
  for (Index r0 = 0; r0 < N; r0 += kHeadChunkRows) {
    const Index rows = std::min(kHeadChunkRows, N - r0);
    T* z = head_logits.data();
    mm(Trans::No, Trans::Yes, rows, V, D, inv_scaling, final_x.data() + r0 * D, D, head_weight(), D, T(0), z, V,
       reuse_head);
    if (logits_out) backend->copy(logits_out + r0 * V, z, rows * V);
    backend->cross_entropy_rows(z, row_loss.data() + r0, targets.data() + r0, rows, V, c.ignore_index,
                                grad_scale_per_token, want_grad);
    if (!want_grad) continue;
    const Stopwatch backward_watch;  // the head's backward half, counted as backward time
    mm(Trans::No, Trans::No, rows, D, V, inv_scaling, z, V, head_weight(), D, T(0), d_final + r0 * D, D,
       reuse_head);
    mm(Trans::Yes, Trans::No, V, D, rows, inv_scaling, z, V, final_x.data() + r0 * D, D, T(1), head_grad(), D);
    times.backward_s += fenced_seconds(backward_watch);
  }
  if (want_grad) {
    const Stopwatch backward_watch;
    T* d_last = scratch->d_resid_a.data();
    backend->fill(d_last, T(0), N * D);
    backend->rmsnorm_backward(d_last, g(head_unit(), "final_norm"), d_final, resid[c.n_layers].data(),
                              w(head_unit(), "final_norm"), final_rstd.data(), N, D);
    times.backward_s += fenced_seconds(backward_watch);
  }
  return backend->loss_sum(row_loss.data(), targets.data(), N, c.ignore_index);
}

template <typename T>
Model<T>::Model(const ModelConfig& config, Recompute recompute, UnitAccess<T>& units, Precision precision)
    : state_(std::make_unique<State>(make_backend<T>(Device::Cpu))) {
  state_->init(config, recompute, units, precision);
}

template <typename T>
Model<T>::Model(const ModelConfig& config, Recompute recompute, UnitAccess<T>& units, Backend<T>& backend,
                Precision precision)
    : state_(std::make_unique<State>(backend)) {
  state_->init(config, recompute, units, precision);
}

template <typename T>
void Model<T>::State::init(const ModelConfig& c, Recompute r, UnitAccess<T>& u, Precision p) {
  c.validate();
  LLMTRAIN_CHECK((std::is_same_v<T, float>) || p == Precision::Fp32,
                 "bf16 products are for float models only (the double model backs the gradient checks)");
  config = c;
  recompute = r;
  precision = p;
  units = &u;
  layouts = unit_layouts(c);
  for (Index l = 1; l <= c.n_layers; ++l) {  // every block has the same layout; each is checked
    qkv_offset = layouts[l].fused({"wq", "wk", "wv"});
    w13_offset = layouts[l].fused({"w1", "w3"});
  }
  param.assign(layouts.size(), nullptr);
  grad.assign(layouts.size(), nullptr);
  const Index half = c.head_dim() / 2;
  rope_cos = Buffer<T>(*backend, c.max_seq_len * half, "rope_cos");
  rope_sin = Buffer<T>(*backend, c.max_seq_len * half, "rope_sin");
  std::vector<T> cos_h(std::size_t(c.max_seq_len * half)), sin_h(cos_h.size());
  const std::vector<double> inverse_frequency = c.rope_inverse_frequencies();
  for (Index pos = 0; pos < c.max_seq_len; ++pos) {
    for (Index k = 0; k < half; ++k) {
      const double angle = double(pos) * inverse_frequency[std::size_t(k)];
      cos_h[std::size_t(pos * half + k)] = T(std::cos(angle));
      sin_h[std::size_t(pos * half + k)] = T(std::sin(angle));
    }
  }
  rope_cos.copy_from_host(cos_h);
  rope_sin.copy_from_host(sin_h);
}

template <typename T>
Model<T>::~Model() = default;

template <typename T>
const ModelConfig& Model<T>::config() const { return state_->config; }

template <typename T>
Backend<T>& Model<T>::backend() const { return *state_->backend; }

// The order forward_backward below acquires in: forward 0..L, the head (and the tied embedding), then the
// blocks in reverse; the embedding's backward acquires nothing.
AcquireOrder training_pass_order(const ModelConfig& config) {
  const int head = int(config.n_layers) + 1;
  AcquireOrder order;
  for (int u = 0; u <= head; ++u) order.units.push_back(u);
  if (config.tie_embeddings) order.units.push_back(0);
  order.first_backward = order.units.size();
  for (int u = head - 1; u >= 1; --u) order.units.push_back(u);
  return order;
}

template <typename T>
LossSum Model<T>::forward_backward(const Batch& batch, double grad_scale) {
  auto& s = *state_;
  s.times = PassTimes{};
  const Stopwatch forward_watch;
  s.prepare(batch);
  s.embed();
  s.forward_blocks();
  // The mean is over counted targets; count them on the host first to scale the logits' gradient.
  const auto ignore = s.config.ignore_index;
  Index counted = 0;
  for (Index r = 0; r < batch.rows; ++r)
    for (Index t = 1; t <= batch.seq_len; ++t) counted += batch.row(r)[t] != ignore ? 1 : 0;
  const T scale = counted > 0 ? T(grad_scale / double(counted)) : T(0);
  // The head runs forward and backward chunk by chunk (its logits never exist whole): its unit's gradient,
  // and the tied embedding's share, are written here, so the backward pass starts at the head.
  s.acquire_head();
  const LossSum loss = s.final_and_head(true, scale, nullptr);
  s.release_head();
  s.grad_ready(s.head_unit());
  s.times.forward_s = s.fenced_seconds(forward_watch) - s.times.backward_s;
  const Stopwatch backward_watch;
  T* d_out = s.scratch->d_resid_a.data();
  T* d_in = s.scratch->d_resid_b.data();
  for (Index l = s.config.n_layers - 1; l >= 0; --l) {
    s.acquire(l + 1);
    s.block_backward(l, d_out, d_in);
    s.release(l + 1);
    s.grad_ready(l + 1);
    std::swap(d_out, d_in);
  }
  // The embedding's backward reads no parameter, only its gradient (which, when tied, the head has
  // already added to).
  if (s.config.embedding_multiplier != 1.0)
    s.backend->scale(d_out, T(s.config.embedding_multiplier), s.n() * s.config.d_model);
  s.backend->embedding_backward(s.g(0, "tok_embedding"), d_out, s.tokens.data(), s.n(), s.config.d_model);
  s.grad_ready(0);
  s.times.backward_s += s.fenced_seconds(backward_watch);
  poll_progress();
  return loss;
}

template <typename T>
LossSum Model<T>::forward(const Batch& batch) {
  auto& s = *state_;
  s.prepare(batch);
  s.embed();
  s.forward_blocks();
  s.acquire_head();
  const LossSum loss = s.final_and_head(false, T(0), nullptr);
  s.release_head();
  return loss;
}

template <typename T>
std::vector<T> Model<T>::logits(const Batch& batch) {
  auto& s = *state_;
  s.prepare(batch);
  s.embed();
  s.forward_blocks();
  Buffer<T> all(*s.backend, s.n() * s.config.vocab_size, "logits");
  s.acquire_head();
  s.final_and_head(false, T(0), all.data());
  s.release_head();
  return all.to_host();
}

template <typename T>
std::vector<T> Model<T>::decode(const Batch& batch, KvCache<T>& cache, const std::vector<Index>& last) {
  auto& s = *state_;
  LLMTRAIN_CHECK(s.backend->device() == Device::Cpu, "decode runs on the host backend only (its key/value cache is "
                 "host memory); this model runs on the ", device_name(s.backend->device()), " backend");
  LLMTRAIN_CHECK(Index(last.size()) == batch.rows, "decode: ", last.size(), " last positions for ", batch.rows,
                 " rows");
  LLMTRAIN_CHECK(cache.empty() || batch.seq_len == 1, "decode: a step takes one token per row, got ", batch.seq_len);
  s.prepare(batch);
  s.cache = &cache;
  struct Detach {  // the cache serves this pass only, even when it throws
    State& s;
    ~Detach() { s.cache = nullptr; }
  } detach{s};
  s.embed();
  s.forward_blocks();
  // Only the rows' last positions reach the head: they move to the front of the final residual stream and
  // the head runs on them as a batch of one-token rows (row r's source r * seq + last[r] >= r, so moving in
  // order overwrites nothing still to be read).
  const Index D = s.config.d_model, seq = s.seq;
  T* final_resid = s.resid[s.config.n_layers].data();
  for (Index r = 0; r < batch.rows; ++r) {
    const Index at = last[std::size_t(r)];
    LLMTRAIN_CHECK(at >= 0 && at < seq, "decode: last position ", at, " of row ", r, " outside [0, ", seq, ")");
    s.backend->copy(final_resid + r * D, final_resid + (r * seq + at) * D, D);
  }
  Buffer<T> logits(*s.backend, batch.rows * s.config.vocab_size, "decode_logits");
  s.seq = 1;
  s.acquire_head();
  s.final_and_head(false, T(0), logits.data());
  s.release_head();
  s.seq = seq;
  return logits.to_host();
}

template <typename T>
const PassTimes& Model<T>::last_pass_times() const { return state_->times; }

// What the constructor (RoPE tables) and State::prepare allocate, buffer by buffer.
template <typename T>
std::int64_t Model<T>::own_bytes(const ModelConfig& c, Recompute recompute, std::int64_t rows, std::int64_t seq_len) {
  const Index n = rows * seq_len, kept = recompute == Recompute::Blocks ? 1 : c.n_layers;
  const Index scalars = 2 * c.max_seq_len * (c.head_dim() / 2)                   // rope_cos, rope_sin
                        + (c.n_layers + 1) * n * c.d_model                        // resid
                        + kept * BlockActivations<T>::elements(c, rows, seq_len)  // acts
                        + BackwardScratch<T>::elements(c, n)                      // scratch
                        + Attention<T>::elements(attention_shape(c, rows, seq_len))
                        + n * c.d_model + 2 * n                                   // final_x, final_rstd, row_loss
                        + std::min(kHeadChunkRows, n) * c.vocab_size;             // head_logits
  return scalars * Index(sizeof(T)) + 3 * n * Index(sizeof(std::int32_t));      // + tokens, targets, doc
}

template class Model<float>;
template class Model<double>;

}  // namespace llmtrain::model
