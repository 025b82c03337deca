// The checkpoint file under mpirun: written by W ranks from FSDP-like ranges (some empty when a unit is
// smaller than W) or from whole units, read back into other ranges, verified, and corrupted on purpose.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "llmtrain/ckpt/checkpoint.hpp"
#include "llmtrain/core/error.hpp"
#include "llmtrain/dist/runtime.hpp"

extern llmtrain::dist::Runtime* g_runtime;

namespace {

using namespace llmtrain;
using Units = std::vector<model::ParamUnit<float>>;

// Unit "a": a 5x7 matrix and a 3-vector; unit "b": 2 elements (empty ranges on 3 or more ranks).
std::vector<model::UnitLayout> layouts() {
  model::UnitLayout a{"a", {{"w", 0, {5, 7}, false}, {"n", 35, {3}, true}}};
  model::UnitLayout b{"b", {{"s", 0, {2}, true}}};
  return {a, b};
}

float value(std::size_t unit, std::int64_t i, float salt) { return std::sin(float(unit * 100 + i) + salt) * 3.0f; }

// Range [lo, hi) of every unit for `part` of `parts`; filled with value(.., salt) or zeros.
Units make_units(int part, int parts, float salt, bool fill) {
  Units out;
  const auto all = layouts();
  for (std::size_t u = 0; u < all.size(); ++u) {
    const std::int64_t n = all[u].size(), lo = n * part / parts, hi = n * (part + 1) / parts;
    model::ParamUnit<float> unit{all[u], Kokkos::View<float*>("unit", std::size_t(hi - lo)), lo};
    for (std::int64_t i = lo; i < hi; ++i) unit.flat(std::size_t(i - lo)) = fill ? value(u, i, salt) : 0.0f;
    out.push_back(unit);
  }
  return out;
}

std::string temp_path(const std::string& name) {
  const std::string dir = (std::filesystem::temp_directory_path() / "llmtrain_ckpt_file_test").string();
  if (g_runtime->rank() == 0) std::filesystem::create_directories(dir);
  g_runtime->barrier();
  return dir + "/" + name + "_np" + std::to_string(g_runtime->size()) + ".h5";
}

// Contents point into params, m and v: filled in place, never copied.
struct Written {
  Written(int part, int parts);
  Written(const Written&) = delete;
  Units params, m, v;
  ckpt::Contents contents;
};

Written::Written(int part, int parts)
    : params(make_units(part, parts, 0.f, true)), m(make_units(part, parts, 1.f, true)), v(make_units(part, parts, 2.f, true)) {
  ckpt::Contents& c = contents;
  c.metadata.step = 42;
  c.metadata.tokens_seen = 1 << 20;
  c.metadata.world_size = g_runtime->size();
  c.metadata.strategy = "fsdp";
  c.metadata.config = "[model]\nd_model = 8\n";
  c.metadata.corpus = "gpl=/data/gpl.jsonl\n";
  c.metadata.tokenizer_fingerprint = 0xfeedfacecafebeefULL;
  c.metadata.code_version = "test";
  c.params = &params, c.first_moments = &m, c.second_moments = &v;
  c.optimizer_step = 41;
  for (int r = 0; r < g_runtime->size(); ++r) c.train_loader.push_back(std::string(std::size_t(r * 3 + 4), char('a' + r)));
  c.rng = {1234, 99};
}

void expect_units(const Units& units, float salt) {
  for (std::size_t u = 0; u < units.size(); ++u)
    for (std::int64_t i = units[u].begin; i < units[u].end(); ++i)
      ASSERT_EQ(units[u].flat(std::size_t(i - units[u].begin)), value(u, i, salt)) << "unit " << u << " element " << i;
}

TEST(CheckpointFile, ShardedWriteReadsBackIntoOtherRanges) {
  const int rank = g_runtime->rank(), size = g_runtime->size();
  const std::string path = temp_path("sharded");
  const Written w(rank, size);
  // W = 1: one rank holds whole units, the replicated split applies; a 3 x 2 unit still works.
  EXPECT_GT(ckpt::write_checkpoint(path, w.contents, g_runtime->comm(), {4096, false, 60}), 0u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  ckpt::Reader reader(path, g_runtime->comm());
  EXPECT_EQ(reader.metadata().step, 42);
  EXPECT_EQ(reader.metadata().tokens_seen, 1 << 20);
  EXPECT_EQ(reader.metadata().world_size, size);
  EXPECT_EQ(reader.metadata().strategy, "fsdp");
  EXPECT_EQ(reader.metadata().config, w.contents.metadata.config);
  EXPECT_EQ(reader.metadata().tokenizer_fingerprint, 0xfeedfacecafebeefULL);
  reader.verify();
  // Whole units on every rank, then every rank the range of rank W-1-r: other splits than the writer's.
  for (const auto& [part, parts] : {std::pair<int, int>{0, 1}, {size - 1 - rank, size}, {rank, size + 1}}) {
    Units params = make_units(part, parts, 0.f, false), m = make_units(part, parts, 0.f, false);
    reader.read_units("model", params, "");
    reader.read_units("optim", m, "m");
    expect_units(params, 0.f);
    expect_units(m, 1.f);
  }
  EXPECT_EQ(reader.optimizer_step(), 41);
  EXPECT_EQ(reader.loader_states(), w.contents.train_loader);
  EXPECT_EQ(reader.rng(), w.contents.rng);
  const auto sets = reader.datasets();
  bool found = false;
  for (const auto& d : sets)
    if (d.name == "/model/a/w") {
      found = true;
      EXPECT_EQ(d.shape, (std::vector<std::uint64_t>{5, 7}));
      EXPECT_EQ(d.type, "f32");
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(sets.size(), 3u * 3u + 1u + 2u + 1u);  // tensors x {model, m, v}, step, loader states and offsets, rng
}

TEST(CheckpointFile, ChecksumsDoNotDependOnHowRanksSplitTheData) {
  const int rank = g_runtime->rank(), size = g_runtime->size();
  const Written sharded(rank, size), whole(0, 1);
  const std::string a = temp_path("split_a"), b = temp_path("split_b");
  ckpt::write_checkpoint(a, sharded.contents, g_runtime->comm());
  ckpt::write_checkpoint(b, whole.contents, g_runtime->comm());
  ckpt::Reader ra(a, g_runtime->comm()), rb(b, g_runtime->comm());
  const auto da = ra.datasets(), db = rb.datasets();
  ASSERT_EQ(da.size(), db.size());
  for (std::size_t i = 0; i < da.size(); ++i) {
    EXPECT_EQ(da[i].name, db[i].name);
    EXPECT_EQ(da[i].checksum, db[i].checksum) << da[i].name;
  }
  // One element changed (element 0 of /model/a/w, which rank 0 holds): that dataset's checksum alone differs.
  Written other(rank, size);
  if (rank == 0) other.params[0].flat(0) += 1.0f;
  const std::string c = temp_path("split_c");
  ckpt::write_checkpoint(c, other.contents, g_runtime->comm());
  ckpt::Reader rc(c, g_runtime->comm());
  const auto dc = rc.datasets();
  ASSERT_EQ(dc.size(), da.size());
  for (std::size_t i = 0; i < da.size(); ++i) {
    if (da[i].name == "/model/a/w")
      EXPECT_NE(dc[i].checksum, da[i].checksum);
    else
      EXPECT_EQ(dc[i].checksum, da[i].checksum) << da[i].name;
  }
}

// Flips one byte of a dataset's stored data (rank 0, serial HDF5 to find where the data is).
void flip_byte(const std::string& path, const std::string& dataset, std::uint64_t at) {
  if (g_runtime->rank() == 0) {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t set = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
    const haddr_t offset = H5Dget_offset(set);
    H5Dclose(set);
    H5Fclose(file);
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(std::streamoff(offset + at));
    char byte = 0;
    f.read(&byte, 1);
    byte = char(byte ^ 0x10);
    f.seekp(std::streamoff(offset + at));
    f.write(&byte, 1);
  }
  g_runtime->barrier();
}

TEST(CheckpointFile, FlippedByteFailsVerificationNamingTheDataset) {
  for (const std::string dataset : {"/model/a/w", "/optim/b/s/v", "/loader/train/states"}) {
    const std::string path = temp_path("flip");
    const Written w(g_runtime->rank(), g_runtime->size());
    ckpt::write_checkpoint(path, w.contents, g_runtime->comm());
    flip_byte(path, dataset, 1);
    ckpt::Reader reader(path, g_runtime->comm());
    try {
      reader.verify();
      ADD_FAILURE() << "verify() accepted a flipped byte in " << dataset;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dataset " + dataset + " fails verification"), std::string::npos) << e.what();
    }
  }
}

TEST(CheckpointFile, BadInputsAreClearErrorsOnEveryRank) {
  const std::string missing = temp_path("missing");
  try {
    ckpt::Reader reader(missing, g_runtime->comm());
    ADD_FAILURE() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no such checkpoint file"), std::string::npos) << e.what();
  }
  const std::string text = temp_path("text");
  if (g_runtime->rank() == 0) std::ofstream(text) << "not hdf5\n";
  g_runtime->barrier();
  try {
    ckpt::Reader reader(text, g_runtime->comm());
    ADD_FAILURE() << "opened a text file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a readable HDF5 file"), std::string::npos) << e.what();
  }
  // A model whose tensor shapes differ from the file's.
  const std::string path = temp_path("shape");
  const Written w(g_runtime->rank(), g_runtime->size());
  ckpt::write_checkpoint(path, w.contents, g_runtime->comm());
  ckpt::Reader reader(path, g_runtime->comm());
  Units wrong = make_units(0, 1, 0.f, false);
  wrong[0].layout.tensors[0].shape = {7, 5};
  try {
    reader.read_units("model", wrong, "");
    ADD_FAILURE() << "read a 5x7 dataset into a 7x5 tensor";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/model/a/w does not have the shape"), std::string::npos) << e.what();
  }
}

}  // namespace

