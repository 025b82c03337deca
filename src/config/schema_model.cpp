// The [model] section of the configuration schema (schema.hpp): the decoder's shape, initialisation and
// attention masking. Each entry binds a key to its member of ModelConfig (llmtrain/core/model_config.hpp).
#include "field_builders.hpp"

namespace llmtrain::schema {

SectionSchema model_section() {
  using C = Config;
  SectionSchema section{"model", "Shape of the Llama/Granite-style decoder.", {}};
  section.fields = {
      bind_member(&C::model, &ModelConfig::vocab_size, integer<C>("model", "vocab_size", 0, 0, 1 << 24,
           "Vocabulary size; 0 takes the tokenizer's size (added tokens included).")),
      bind_member(&C::model, &ModelConfig::d_model, integer<C>("model", "d_model", 768, 8, 65536,
           "Width of the residual stream.")),
      bind_member(&C::model, &ModelConfig::n_layers, integer<C>("model", "n_layers", 12, 1, 1024,
           "Number of transformer blocks.")),
      bind_member(&C::model, &ModelConfig::n_heads, integer<C>("model", "n_heads", 12, 1, 1024,
           "Attention (query) heads; must divide d_model.")),
      bind_member(&C::model, &ModelConfig::n_kv_heads, integer<C>("model", "n_kv_heads", 0, 0, 1024,
           "Key/value heads for grouped-query attention; must divide n_heads; 0 means n_heads.")),
      bind_member(&C::model, &ModelConfig::d_ff, integer<C>("model", "d_ff", 0, 0, 1 << 20,
           "Hidden width of the SwiGLU MLP; 0 applies Llama's rule (8/3 d_model, rounded up to 256).")),
      bind_member(&C::model, &ModelConfig::rope_theta, real<C>("model", "rope_theta", 10000.0, 1.0, 1e9,
           "Base of the rotary position embedding frequencies.")),
      bind_member(&C::model, &ModelConfig::norm_eps, real<C>("model", "norm_eps", 1e-5, 1e-12, 0.1,
           "Epsilon of RMSNorm.")),
      bind_member(&C::model, &ModelConfig::tie_embeddings, boolean<C>("model", "tie_embeddings", false,
           "Share the token embedding with the output head.")),
      bind_member(&C::model, &ModelConfig::init_std, real<C>("model", "init_std", 0.02, 0.0, 1.0,
           "Standard deviation of the normal initialisation of weight matrices.")),
      bind_member(&C::model, &ModelConfig::seed, integer<C>("model", "seed", 1234, 0, kMaxInt,
           "Seed of the weight initialisation.")),
      bind_member(&C::model, &ModelConfig::mask_documents, boolean<C>("model", "mask_documents", false,
           "Mask attention across document boundaries inside a packed row.")),
  };
  return section;
}

}  // namespace llmtrain::schema
