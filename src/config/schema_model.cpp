// The [model] section of the configuration schema (schema.hpp): the decoder's shape, initialisation,
// attention masking, Granite's multipliers and the rotary frequencies. Each entry binds a key to its member
// of ModelConfig (llmtrain/core/model_config.hpp).
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
      bind_member(&C::model, &ModelConfig::max_position_embeddings, integer<C>("model", "max_position_embeddings", 0, 0,
           kMaxInt, "The context length the model is meant for, which exports state (an imported model's); 0: "
           "data.seq_len.")),
      bind_member(&C::model, &ModelConfig::embedding_multiplier, real<C>("model", "embedding_multiplier", 1.0, 1e-6, 1e6,
           "Scales the token embeddings entering the first block (Granite; 1 for Llama).")),
      bind_member(&C::model, &ModelConfig::residual_multiplier, real<C>("model", "residual_multiplier", 1.0, 1e-6, 1e6,
           "Scales each attention and MLP output before its residual add (Granite; 1 for Llama).")),
      bind_member(&C::model, &ModelConfig::attention_multiplier, real<C>("model", "attention_multiplier", 0.0, 0.0, 1e6,
           "Softmax scale of the attention scores (Granite); 0 means 1/sqrt(head_dim), Llama's.")),
      bind_member(&C::model, &ModelConfig::logits_scaling, real<C>("model", "logits_scaling", 1.0, 1e-6, 1e6,
           "The output logits are divided by it (Granite; 1 for Llama).")),
      bind_member(&C::model, &ModelConfig::rope_type, choice<C>("model", "rope_type", "default", {"default", "llama3"},
           "Rotary frequencies: \"default\" (rope_theta^(-2k/head_dim)) or \"llama3\" (Llama 3.1's remapping to a "
           "longer context, with the four rope_* parameters below).")),
      bind_member(&C::model, &ModelConfig::rope_factor, real<C>("model", "rope_factor", 8.0, 1.0, 1e6,
           "rope_type = \"llama3\": how much the low frequencies are stretched.")),
      bind_member(&C::model, &ModelConfig::rope_low_freq_factor, real<C>("model", "rope_low_freq_factor", 1.0, 1e-6, 1e6,
           "rope_type = \"llama3\": wavelengths above original_max_position_embeddings / this are stretched fully.")),
      bind_member(&C::model, &ModelConfig::rope_high_freq_factor, real<C>("model", "rope_high_freq_factor", 4.0, 1e-6, 1e6,
           "rope_type = \"llama3\": wavelengths below original_max_position_embeddings / this are kept.")),
      bind_member(&C::model, &ModelConfig::rope_original_max_position_embeddings,
           integer<C>("model", "rope_original_max_position_embeddings", 8192, 1, kMaxInt,
           "rope_type = \"llama3\": the context length the model was first trained at.")),
  };
  return section;
}

}  // namespace llmtrain::schema
