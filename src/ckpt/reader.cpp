// Reading a checkpoint on any number of ranks: metadata, verification, and each rank's ranges of the global
// datasets (include/llmtrain/ckpt/checkpoint.hpp has the layout).
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "h5.hpp"
#include "layout.hpp"
#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/core/error.hpp"

namespace llmtrain::ckpt {

class Reader::Impl {
 public:
  Impl(const std::string& path, MPI_Comm comm) : path_(path), comm_(comm), agree_(comm, false) {
    MPI_Comm_rank(comm, &rank_);
    MPI_Comm_size(comm, &size_);
  }

  void open() {
    h5::init();
    // Rank 0 looks first so that a missing file is one clear message, not an HDF5 error from every rank.
    if (rank_ == 0 && !std::filesystem::is_regular_file(path_)) agree_.fail_locally(path_ + ": no such checkpoint file");
    agree_.check();
    fapl_ = h5::file_access(comm_, 0, false);
    dxpl_ = h5::data_transfer();
    if (agree_.local(fapl_.ok() && dxpl_.ok(), "setting up parallel HDF5"))
      file_ = h5::Handle(H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl_.get()), H5Fclose);
    agree_.local(file_.ok(), path_ + ": not a readable HDF5 file");
    agree_.check();
  }

  bool read_attribute(hid_t object, const char* name, hid_t type, void* out) {
    h5::Handle attr(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
    return agree_.local(attr.ok() && H5Aread(attr.get(), type, out) >= 0, cat(path_, ": attribute '", name, "'"));
  }

  std::string read_string_attribute(hid_t object, const char* name) {
    h5::Handle attr(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
    h5::Handle type(attr.ok() ? H5Aget_type(attr.get()) : -1, H5Tclose);
    std::string value;
    if (type.ok() && H5Tget_class(type.get()) == H5T_STRING && !H5Tis_variable_str(type.get())) {
      value.resize(H5Tget_size(type.get()));
      if (H5Aread(attr.get(), type.get(), value.data()) >= 0) {
        value.resize(std::strlen(value.c_str()));
        return value;
      }
    }
    agree_.local(false, cat(path_, ": string attribute '", name, "'"));
    return value;
  }

  Metadata read_metadata() {
    Metadata m;
    const hid_t f = file_.get();
    read_attribute(f, "format_version", H5T_NATIVE_INT64, &m.format_version);
    read_attribute(f, "step", H5T_NATIVE_INT64, &m.step);
    read_attribute(f, "tokens_seen", H5T_NATIVE_INT64, &m.tokens_seen);
    read_attribute(f, "world_size", H5T_NATIVE_INT64, &m.world_size);
    read_attribute(f, "tokenizer_fingerprint", H5T_NATIVE_UINT64, &m.tokenizer_fingerprint);
    m.strategy = read_string_attribute(f, "strategy");
    m.config = read_string_attribute(f, "config");
    m.corpus = read_string_attribute(f, "corpus");
    m.code_version = read_string_attribute(f, "code_version");
    agree_.check();
    LLMTRAIN_CHECK(m.format_version == kFormatVersion, path_, ": checkpoint format version ", m.format_version,
                   ", this build reads version ", kFormatVersion);
    return m;
  }

  // An open dataset with its shape and element type; errors are agreed before returning.
  struct Dataset {
    h5::Handle id, space;
    std::vector<hsize_t> shape;
    ElementType type = ElementType::u8;
    std::uint64_t elements = 1;
  };

  Dataset open_dataset(const std::string& name) {
    Dataset d;
    d.id = h5::Handle(H5Dopen2(file_.get(), name.c_str(), H5P_DEFAULT), H5Dclose);
    if (agree_.local(d.id.ok(), cat(path_, ": dataset ", name, " missing"))) {
      d.space = h5::Handle(H5Dget_space(d.id.get()), H5Sclose);
      h5::Handle type(H5Dget_type(d.id.get()), H5Tclose);
      const int rank = d.space.ok() ? H5Sget_simple_extent_ndims(d.space.get()) : -1;
      if (agree_.local(type.ok() && rank >= 0, cat(path_, ": dataset ", name, " unreadable"))) {
        d.shape.resize(std::size_t(rank));
        H5Sget_simple_extent_dims(d.space.get(), d.shape.data(), nullptr);
        for (hsize_t s : d.shape) d.elements *= s;
        bool known = false;
        for (ElementType t : {ElementType::f32, ElementType::u8, ElementType::u64, ElementType::i64})
          if (H5Tequal(type.get(), file_type(t)) > 0) d.type = t, known = true;
        agree_.local(known, cat(path_, ": dataset ", name, " has an element type checkpoints do not use"));
      }
    }
    agree_.check();
    return d;
  }

  // Collective: every rank reads its own [begin, end) of `d` into out (may be empty).
  void read_range(Dataset& d, const std::string& name, std::uint64_t begin, std::uint64_t end, void* out) {
    if (d.elements == 0) return;  // nothing stored, no transfer (the same on every rank)
    const bool ok = h5::transfer_range(d.id.get(), d.space.get(), memory_type(d.type), dxpl_.get(), d.shape, begin,
                                       end, element_size(d.type), out, false);
    agree_.local(ok, cat(path_, ": reading ", name));
    agree_.check();
  }

  std::uint64_t stored_checksum(Dataset& d, const std::string& name) {
    std::uint64_t sum = 0;
    read_attribute(d.id.get(), "checksum", H5T_NATIVE_UINT64, &sum);
    agree_.check();
    (void)name;
    return sum;
  }

  std::vector<std::string> dataset_names() {
    std::vector<std::string> names;
    const herr_t status = H5Ovisit2(
        file_.get(), H5_INDEX_NAME, H5_ITER_INC,
        [](hid_t, const char* name, const H5O_info_t* info, void* out) -> herr_t {
          if (info->type == H5O_TYPE_DATASET) static_cast<std::vector<std::string>*>(out)->push_back(std::string("/") + name);
          return 0;
        },
        &names, H5O_INFO_BASIC);
    agree_.local(status >= 0, path_ + ": listing the datasets");
    agree_.check();
    return names;
  }

  int rank_ = 0, size_ = 1;
  std::string path_;
  MPI_Comm comm_;
  h5::Agreement agree_;
  h5::Handle fapl_, dxpl_, file_;
};

Reader::Reader(const std::string& path, MPI_Comm comm) : path_(path), comm_(comm), impl_(std::make_unique<Impl>(path, comm)) {
  impl_->open();
  metadata_ = impl_->read_metadata();
}

Reader::~Reader() = default;

std::vector<DatasetInfo> Reader::datasets() {
  std::vector<DatasetInfo> out;
  for (const auto& name : impl_->dataset_names()) {
    auto d = impl_->open_dataset(name);
    DatasetInfo info{name, type_name(d.type), {d.shape.begin(), d.shape.end()}, impl_->stored_checksum(d, name)};
    out.push_back(std::move(info));
  }
  return out;
}

void Reader::verify() {
  // Slices of at most 16 Mi elements per rank and read, so memory stays bounded whatever the tensor size.
  constexpr std::uint64_t kSlice = std::uint64_t(1) << 24;
  const int rank = impl_->rank_, size = impl_->size_;
  std::vector<std::string> names = impl_->dataset_names();
  for (const auto& name : names) {
    auto d = impl_->open_dataset(name);
    const std::uint64_t stored = impl_->stored_checksum(d, name);
    const std::uint64_t lo = d.elements * std::uint64_t(rank) / std::uint64_t(size);
    const std::uint64_t hi = d.elements * std::uint64_t(rank + 1) / std::uint64_t(size);
    const std::uint64_t rounds = (d.elements / std::uint64_t(size) + kSlice) / kSlice;  // the same on every rank
    std::vector<unsigned char> buffer;
    std::uint64_t sum = 0;
    for (std::uint64_t r = 0; r < rounds; ++r) {
      const std::uint64_t a = std::min(hi, lo + r * kSlice), b = std::min(hi, a + kSlice);
      buffer.resize((b - a) * element_size(d.type));
      impl_->read_range(d, name, a, b, buffer.data());
      sum += checksum(buffer.data(), d.type, a, b - a);
    }
    MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, impl_->comm_);
    LLMTRAIN_CHECK(sum == stored, path_, ": dataset ", name, " fails verification: checksum ", sum, ", stored ", stored);
  }
}

void Reader::read_units(const std::string& group, std::vector<model::ParamUnit<float>>& units, const std::string& suffix) {
  for (auto& unit : units) {
    const std::int64_t hi = std::min(unit.end(), unit.layout.size());
    for (const auto& t : unit.layout.tensors) {
      const std::string name = tensor_dataset(group, unit.layout.name, t.name, suffix);
      auto d = impl_->open_dataset(name);
      std::vector<hsize_t> expected(t.shape.begin(), t.shape.end());
      LLMTRAIN_CHECK(d.shape == expected && d.type == ElementType::f32, path_, ": dataset ", name,
                     " does not have the shape of this model's tensor (a different model configuration)");
      const std::int64_t a = std::max(unit.begin, t.offset), b = std::min(hi, t.offset + t.size());
      if (a < b)
        impl_->read_range(d, name, std::uint64_t(a - t.offset), std::uint64_t(b - t.offset),
                          unit.flat.data() + (a - unit.begin));
      else
        impl_->read_range(d, name, 0, 0, nullptr);
    }
  }
}

std::int64_t Reader::optimizer_step() {
  auto d = impl_->open_dataset("/optim/step");
  std::int64_t step = 0;
  impl_->read_range(d, "/optim/step", 0, 1, &step);
  return step;
}

std::vector<std::string> Reader::loader_states() {
  int present = H5Lexists(impl_->file_.get(), "/loader/train", H5P_DEFAULT) > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &present, 1, MPI_INT, MPI_MIN, impl_->comm_);
  if (!present) return {};
  const std::string states_name = "/loader/train/states", offsets_name = "/loader/train/offsets";
  auto offsets_set = impl_->open_dataset(offsets_name);
  std::vector<std::uint64_t> offsets(offsets_set.elements);
  impl_->read_range(offsets_set, offsets_name, 0, offsets.size(), offsets.data());
  auto states_set = impl_->open_dataset(states_name);
  bool ordered = !offsets.empty() && offsets.front() == 0 && offsets.back() == states_set.elements;
  for (std::size_t i = 1; i < offsets.size(); ++i) ordered = ordered && offsets[i - 1] <= offsets[i];
  LLMTRAIN_CHECK(ordered, path_, ": ", offsets_name, " does not describe ", states_name);
  std::string joined(states_set.elements, '\0');
  impl_->read_range(states_set, states_name, 0, joined.size(), joined.data());
  std::vector<std::string> blobs;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) blobs.push_back(joined.substr(offsets[i], offsets[i + 1] - offsets[i]));
  return blobs;
}

std::vector<std::uint64_t> Reader::rng() {
  auto d = impl_->open_dataset("/rng");
  std::vector<std::uint64_t> values(d.elements);
  impl_->read_range(d, "/rng", 0, values.size(), values.data());
  return values;
}

std::vector<float> Reader::read_tensor(const std::string& name, std::vector<std::uint64_t>& shape) {
  auto d = impl_->open_dataset(name);
  LLMTRAIN_CHECK(d.type == ElementType::f32, path_, ": dataset ", name, " is not fp32");
  shape.assign(d.shape.begin(), d.shape.end());
  std::vector<float> values(d.elements);
  impl_->read_range(d, name, 0, values.size(), values.data());
  return values;
}

}  // namespace llmtrain::ckpt
