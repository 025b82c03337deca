// The memory tier: snapshots in node-local memory with buddy copies, and their restore on any number of
// ranks (see include/llmtrain/ckpt/memory_tier.hpp).
#include "llmtrain/ckpt/memory_tier.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/hash.hpp"
#include "llmtrain/core/log.hpp"
#include "llmtrain/core/timer.hpp"
#include "memory_part.hpp"
#include "owned_ranges.hpp"

namespace llmtrain::ckpt {
namespace fs = std::filesystem;
namespace {

constexpr int kSizeTag = 7301, kDataTag = 7302;
constexpr std::uint64_t kChunk = 1ULL << 30;  // bytes per message: MPI counts are int

std::string step_dir(const std::string& dir, std::int64_t step) {
  char name[40];
  std::snprintf(name, sizeof name, "step_%08lld", static_cast<long long>(step));
  return (fs::path(dir) / name).string();
}
std::string part_name(const char* prefix, std::int64_t rank) {
  char name[48];
  std::snprintf(name, sizeof name, "%spart_%05lld.bin", prefix, static_cast<long long>(rank));
  return name;
}

// Writes `bytes` to path.tmp and renames it (memory: no sync). Throws naming the file.
void write_file(const std::string& path, const char* data, std::size_t bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data, std::streamsize(bytes));
    out.close();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      LLMTRAIN_FAIL(tmp, ": cannot write the memory snapshot part (", bytes, " bytes; is the memory directory full?)");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  LLMTRAIN_CHECK(!ec, path, ": cannot rename the memory snapshot part: ", ec.message());
}

void send_bytes(const std::vector<char>& data, int to, MPI_Comm comm, std::vector<MPI_Request>& requests,
                std::uint64_t& size) {
  size = data.size();
  requests.emplace_back();
  MPI_Isend(&size, 1, MPI_UINT64_T, to, kSizeTag, comm, &requests.back());
  for (std::uint64_t at = 0; at < size; at += kChunk) {
    requests.emplace_back();
    MPI_Isend(data.data() + at, int(std::min(kChunk, size - at)), MPI_BYTE, to, kDataTag, comm, &requests.back());
  }
}

std::vector<char> receive_bytes(int from, MPI_Comm comm) {
  std::uint64_t size = 0;
  MPI_Recv(&size, 1, MPI_UINT64_T, from, kSizeTag, comm, MPI_STATUS_IGNORE);
  std::vector<char> data(size);
  for (std::uint64_t at = 0; at < size; at += kChunk)
    MPI_Recv(data.data() + at, int(std::min(kChunk, size - at)), MPI_BYTE, from, kDataTag, comm, MPI_STATUS_IGNORE);
  return data;
}

// Every rank's bytes, in rank order.
std::vector<std::string> all_gather(const std::string& mine, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int n = int(mine.size());
  std::vector<int> counts(std::size_t(size), 0), displs(std::size_t(size), 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::string all(std::size_t(displs.back() + counts.back()), '\0');
  MPI_Allgatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, comm);
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r) out.push_back(all.substr(std::size_t(displs[r]), std::size_t(counts[r])));
  return out;
}

// Length-prefixed fields in a string (for the agreement messages).
void add(std::string& out, const std::string& field) { out += std::to_string(field.size()) + ":" + field; }
std::string next(const std::string& in, std::size_t& at) {
  const std::size_t colon = in.find(':', at);
  const std::size_t n = std::stoull(in.substr(at, colon - at));
  at = colon + 1 + n;
  return in.substr(colon + 1, n);
}

// The part files in dir's generations, sorted by path.
std::vector<std::string> part_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& generation : list_memory_generations(dir)) {
    for (const auto& f : generation.parts) out.push_back((fs::path(step_dir(dir, generation.step)) / f).string());
    for (const auto& f : generation.buddy_parts) out.push_back((fs::path(step_dir(dir, generation.step)) / f).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<MemoryGeneration> list_memory_generations(const std::string& dir) {
  static const std::regex generation(R"(step_(\d{8,}))"), own(R"(part_\d+\.bin)"), buddy(R"(buddy_part_\d+\.bin)");
  std::vector<MemoryGeneration> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || !std::regex_match(name, m, generation)) continue;
    MemoryGeneration g;
    g.step = std::stoll(m[1].str());
    for (const auto& f : fs::directory_iterator(e.path(), ec)) {
      const std::string file = f.path().filename().string();
      const bool is_own = std::regex_match(file, own), is_buddy = std::regex_match(file, buddy);
      if (!is_own && !is_buddy) continue;
      (is_own ? g.parts : g.buddy_parts).push_back(file);
      g.bytes += f.file_size(ec);
    }
    std::sort(g.parts.begin(), g.parts.end());
    std::sort(g.buddy_parts.begin(), g.buddy_parts.end());
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return out;
}

double memory_part_bytes(std::int64_t parameters, int world_size) {
  return 3.0 * 4.0 * double(parameters) / double(world_size > 0 ? world_size : 1) + 65536.0;
}

MemoryTier::MemoryTier(MPI_Comm comm, std::string dir, std::uint64_t key) : dir_(std::move(dir)), key_(key) {
  std::error_code ec;
  fs::create_directories(dir_, ec);  // a failure shows at the first write
  ::chmod(dir_.c_str(), 0700);       // the run's state: for its user only
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // This rank's node, as a number every rank of the node computes alike.
  std::uint64_t node = 0;
  if (const char* id = std::getenv("LLMTRAIN_NODE_ID"); id && *id) {
    node = hash_bytes(id, std::strlen(id));
  } else {
    MPI_Comm shared;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &shared);
    int leader = rank_;
    MPI_Bcast(&leader, 1, MPI_INT, 0, shared);
    MPI_Comm_free(&shared);
    node = std::uint64_t(leader);
  }
  std::vector<std::uint64_t> nodes_of(std::size_t(size_), 0);
  MPI_Allgather(&node, 1, MPI_UINT64_T, nodes_of.data(), 1, MPI_UINT64_T, comm_);
  std::vector<std::vector<int>> nodes;  // ranks per node, nodes in order of their lowest rank
  std::map<std::uint64_t, std::size_t> index;
  for (int r = 0; r < size_; ++r) {
    const auto [it, fresh] = index.emplace(nodes_of[std::size_t(r)], nodes.size());
    if (fresh) nodes.emplace_back();
    nodes[it->second].push_back(r);
  }
  node_count_ = int(nodes.size());
  const auto buddy_of = [&](int r) {
    const std::size_t k = index.at(nodes_of[std::size_t(r)]);
    const auto& here = nodes[k];
    const auto& there = nodes[(k + 1) % nodes.size()];
    const std::size_t i = std::size_t(std::find(here.begin(), here.end(), r) - here.begin());
    return there[i % there.size()];
  };
  const auto& mine = nodes[index.at(node)];
  node_rank_ = int(std::find(mine.begin(), mine.end(), rank_) - mine.begin());
  node_size_ = int(mine.size());
  if (node_count_ > 1) {
    buddy_ = buddy_of(rank_);
    for (int r = 0; r < size_; ++r)
      if (buddy_of(r) == rank_) senders_.push_back(r);
  }
}

MemoryTier::~MemoryTier() {
  wait();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

double MemoryTier::wait() {
  if (!thread_.joinable()) return 0;
  const Stopwatch waiting;
  thread_.join();
  return waiting.seconds();
}

MemoryTier::Started MemoryTier::snapshot(const Contents& contents) {
  LLMTRAIN_CHECK(contents.params && contents.first_moments && contents.second_moments,
                 "memory snapshot: parameters or moments missing");
  Started started;
  started.blocked_s = wait();
  if (!failure_.empty()) log_warn(std::exchange(failure_, ""), " (the memory tier misses that generation)");
  const Stopwatch copying;
  if (owned_.empty()) owned_ = owned_ranges(*contents.params, comm_, rank_, size_);
  PartHeader h;
  h.key = key_;
  h.metadata = contents.metadata;
  h.rank = rank_;
  h.optimizer_step = contents.optimizer_step;
  h.loader_state = contents.train_loader.empty() ? std::string() : contents.train_loader.front();
  h.rng = contents.rng;
  h.ranges = owned_;
  const std::size_t data_at = begin_part(h, buffer_);  // resizes the buffer
  char* at = buffer_.data() + data_at;
  for (const auto* units : {contents.params, contents.first_moments, contents.second_moments})
    for (std::size_t u = 0; u < units->size(); ++u) {
      const auto& unit = (*units)[u];
      const std::size_t n = std::size_t(owned_[u].second - owned_[u].first);
      std::memcpy(at, unit.flat.data() + (owned_[u].first - unit.begin), n * sizeof(float));
      at += n * sizeof(float);
    }
  started.snapshot_s = copying.seconds();
  thread_ = std::thread([this, step = h.metadata.step] { write_in_background(step); });
  return started;
}

void MemoryTier::write_in_background(std::int64_t step) {
  const std::string generation = step_dir(dir_, step);
  std::string failure;
  seal_part(buffer_);
  try {
    std::error_code ec;
    fs::create_directories(generation, ec);
    ::chmod(dir_.c_str(), 0700);
    write_file((fs::path(generation) / part_name("", rank_)).string(), buffer_.data(), buffer_.size());
  } catch (const Error& e) {
    failure = e.what();
  }
  // The buddy exchange happens whatever the local write did: the peers wait for it.
  std::vector<MPI_Request> requests;
  std::uint64_t size = 0;
  if (buddy_ >= 0) send_bytes(buffer_, buddy_, comm_, requests, size);
  for (const int from : senders_) {
    const std::vector<char> copy = receive_bytes(from, comm_);
    try {
      write_file((fs::path(generation) / part_name("buddy_", from)).string(), copy.data(), copy.size());
    } catch (const Error& e) {
      if (failure.empty()) failure = e.what();
    }
  }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  // Keep this generation and the previous one; this rank's files of any other go (a later one is left by a
  // run this one resumed before).
  for (const auto& g : list_memory_generations(dir_)) {
    if (g.step == step || g.step == kept_) continue;
    const std::string old = step_dir(dir_, g.step);
    std::vector<std::string> mine = {part_name("", rank_)};
    for (const int from : senders_) mine.push_back(part_name("buddy_", from));
    std::error_code ec;
    for (const auto& name : mine)
      for (const fs::path& file : {fs::path(old) / name, fs::path(old) / (name + ".tmp")})
        if (read_part_key(file.string()) == key_) fs::remove(file, ec);  // not another run's
    fs::remove(old, ec);  // only when empty
  }
  kept_ = step;
  failure_ = failure;
  // LLMTRAIN_FAULT=memory.kill:<step>: a crash right after every rank's part of `step` is in memory.
  if (const char* fault = std::getenv("LLMTRAIN_FAULT"); fault && std::string(fault) == cat("memory.kill:", step)) {
    MPI_Barrier(comm_);
    if (rank_ == 0) std::raise(SIGKILL);
  }
}

MemoryTier::Found MemoryTier::find() {
  wait();
  // A share of this node's files per rank, each read whole: the checksum covers every byte.
  const std::vector<std::string> files = part_files(dir_);
  std::string entries, warnings;
  int ignored = 0;
  for (std::size_t i = std::size_t(node_rank_); i < files.size(); i += std::size_t(node_size_)) {
    PartHeader h;
    try {
      h = read_part(files[i], nullptr);
    } catch (const Error& e) {
      warnings += cat("memory snapshot part skipped: ", e.what(), "\n");
      continue;
    }
    if (h.key != key_) {
      ++ignored;
      continue;
    }
    const bool buddy = fs::path(files[i]).filename().string().rfind("buddy_", 0) == 0;
    std::string entry;
    add(entry, std::to_string(h.metadata.step));
    add(entry, std::to_string(h.metadata.world_size));
    add(entry, std::to_string(h.rank));
    add(entry, buddy ? "1" : "0");
    add(entry, files[i]);
    std::string ranges;
    for (const auto& [lo, hi] : h.ranges) ranges += std::to_string(lo) + " " + std::to_string(hi) + " ";
    add(entry, ranges);
    add(entries, entry);
  }
  MPI_Allreduce(MPI_IN_PLACE, &ignored, 1, MPI_INT, MPI_SUM, comm_);
  // Rank 0 speaks for the ranks that read the damaged parts.
  for (const std::string& theirs : all_gather(warnings, comm_))
    for (std::size_t a = 0, b; rank_ == 0 && (b = theirs.find('\n', a)) != std::string::npos; a = b + 1)
      log_warn(theirs.substr(a, b - a));
  if (ignored > 0 && rank_ == 0)
    log_info("ignoring ", ignored, " memory snapshot parts of another run or configuration in ", dir_);
  // (step, world size) -> saved rank -> candidates (holder, buddy?, path, ranges); local copies first.
  struct Candidate {
    bool buddy;
    int holder;
    std::string path;
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::map<int, std::vector<Candidate>>> generations;
  const std::vector<std::string> all = all_gather(entries, comm_);
  for (int holder = 0; holder < size_; ++holder) {
    const std::string& list = all[std::size_t(holder)];
    for (std::size_t at = 0; at < list.size();) {
      const std::string entry = next(list, at);
      std::size_t e = 0;
      const std::int64_t step = std::stoll(next(entry, e)), world = std::stoll(next(entry, e));
      const int saved = std::stoi(next(entry, e));
      Candidate c{next(entry, e) == "1", holder, next(entry, e), {}};
      std::istringstream ranges(next(entry, e));
      for (std::int64_t lo, hi; ranges >> lo >> hi;) c.ranges.push_back({lo, hi});
      generations[{step, world}][saved].push_back(std::move(c));
    }
  }
  Found found;
  for (auto it = generations.rbegin(); it != generations.rend(); ++it) {
    const auto [step, world] = it->first;
    if (std::int64_t(it->second.size()) != world || it->second.rbegin()->first != world - 1) continue;  // incomplete
    if (found.step >= step) break;
    for (auto& [saved, candidates] : it->second) {
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate& a, const Candidate& b) { return !a.buddy && b.buddy; });
      const Candidate& c = candidates.front();
      (c.buddy ? found.buddy_parts : found.local_parts) += 1;
      found.parts.push_back({saved, c.holder, c.path, c.ranges});
    }
    found.step = step;
    break;
  }
  return found;
}

void MemoryTier::restore(const Found& found, Contents& contents, std::vector<model::ParamUnit<float>>& params,
                         std::vector<model::ParamUnit<float>>& first_moments,
                         std::vector<model::ParamUnit<float>>& second_moments) {
  LLMTRAIN_CHECK(found.step >= 0, "memory snapshot restore: no complete generation");
  const std::size_t units = params.size();
  // Every rank's new range of each unit.
  std::vector<std::int64_t> mine, ranges(2 * units * std::size_t(size_));
  for (const auto& unit : params) mine.push_back(unit.begin), mine.push_back(std::min(unit.end(), unit.layout.size()));
  MPI_Allgather(mine.data(), int(2 * units), MPI_INT64_T, ranges.data(), int(2 * units), MPI_INT64_T, comm_);
  const auto target = [&](int r, std::size_t u) {
    return std::pair{ranges[(std::size_t(r) * units + u) * 2], ranges[(std::size_t(r) * units + u) * 2 + 1]};
  };
  for (const auto& part : found.parts)
    LLMTRAIN_CHECK(part.ranges.size() == units, part.path, ": ", part.ranges.size(), " units, this model has ", units);
  // The parts this rank holds, read and verified again; its metadata and loader states for everyone.
  std::map<int, std::vector<float>> data;
  std::string shared;
  for (const auto& part : found.parts) {
    if (part.holder != rank_) continue;
    const PartHeader h = read_part(part.path, &data[part.saved_rank]);
    LLMTRAIN_CHECK(h.key == key_ && h.metadata.step == found.step && h.rank == part.saved_rank, part.path,
                   ": changed since it was listed");
    add(shared, std::to_string(part.saved_rank));
    add(shared, h.loader_state);
    if (part.saved_rank == 0) {
      std::string meta;
      for (const std::int64_t v : {h.metadata.step, h.metadata.tokens_seen, h.metadata.world_size, h.optimizer_step})
        add(meta, std::to_string(v));
      add(meta, std::to_string(h.metadata.tokenizer_fingerprint));
      add(meta, h.metadata.strategy);
      add(meta, h.metadata.config);
      std::string rng;
      for (const std::uint64_t v : h.rng) rng += std::to_string(v) + " ";
      add(meta, rng);
      add(shared, meta);
    }
  }
  contents.train_loader.assign(found.parts.size(), "");
  for (const std::string& from : all_gather(shared, comm_))
    for (std::size_t at = 0; at < from.size();) {
      const int saved = std::stoi(next(from, at));
      contents.train_loader[std::size_t(saved)] = next(from, at);
      if (saved != 0) continue;
      const std::string meta = next(from, at);
      std::size_t m = 0;
      Metadata& md = contents.metadata;
      md.step = std::stoll(next(meta, m));
      md.tokens_seen = std::stoll(next(meta, m));
      md.world_size = std::stoll(next(meta, m));
      contents.optimizer_step = std::stoll(next(meta, m));
      md.tokenizer_fingerprint = std::stoull(next(meta, m));
      md.strategy = next(meta, m);
      md.config = next(meta, m);
      std::istringstream rng(next(meta, m));
      contents.rng.clear();
      for (std::uint64_t v; rng >> v;) contents.rng.push_back(v);
    }
  // The element ranges each rank sends to each, in one order both sides follow: parts by saved rank, then
  // parameters, m, v, then units.
  const auto for_each_piece = [&](int holder, int to, auto&& piece) {
    for (const auto& part : found.parts) {
      if (part.holder != holder) continue;
      std::int64_t offset = 0;  // in the part's data
      for (int kind = 0; kind < 3; ++kind)
        for (std::size_t u = 0; u < units; ++u) {
          const auto [lo, hi] = part.ranges[u];
          const auto [b, e] = target(to, u);
          const std::int64_t from = std::max(lo, b), until = std::min(hi, e);
          if (from < until) piece(part.saved_rank, kind, u, offset + (from - lo), from, until - from);
          offset += hi - lo;
        }
    }
  };
  std::vector<int> send_counts(std::size_t(size_), 0), recv_counts(std::size_t(size_), 0);
  std::vector<int> send_displs(std::size_t(size_), 0), recv_displs(std::size_t(size_), 0);
  std::int64_t send_total = 0, recv_total = 0;
  for (int r = 0; r < size_; ++r) {
    std::int64_t out = 0, in = 0;
    for_each_piece(rank_, r, [&](int, int, std::size_t, std::int64_t, std::int64_t, std::int64_t n) { out += n; });
    for_each_piece(r, rank_, [&](int, int, std::size_t, std::int64_t, std::int64_t, std::int64_t n) { in += n; });
    LLMTRAIN_CHECK(send_total + out < INT_MAX && recv_total + in < INT_MAX,
                   "memory snapshot restore: more than 2^31 elements per rank pair (not supported)");
    send_displs[std::size_t(r)] = int(send_total), send_counts[std::size_t(r)] = int(out);
    recv_displs[std::size_t(r)] = int(recv_total), recv_counts[std::size_t(r)] = int(in);
    send_total += out, recv_total += in;
  }
  std::vector<float> send(static_cast<std::size_t>(send_total)), receive(static_cast<std::size_t>(recv_total));
  for (int r = 0; r < size_; ++r) {
    float* at = send.data() + send_displs[std::size_t(r)];
    for_each_piece(rank_, r, [&](int saved, int, std::size_t, std::int64_t offset, std::int64_t, std::int64_t n) {
      std::memcpy(at, data.at(saved).data() + offset, std::size_t(n) * sizeof(float));
      at += n;
    });
  }
  MPI_Alltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_FLOAT, receive.data(), recv_counts.data(),
                recv_displs.data(), MPI_FLOAT, comm_);
  std::vector<model::ParamUnit<float>>* kinds[3] = {&params, &first_moments, &second_moments};
  std::vector<std::int64_t> filled(3 * units, 0);
  for (int r = 0; r < size_; ++r) {
    const float* at = receive.data() + recv_displs[std::size_t(r)];
    for_each_piece(r, rank_, [&](int, int kind, std::size_t u, std::int64_t, std::int64_t first, std::int64_t n) {
      auto& unit = (*kinds[kind])[u];
      std::memcpy(unit.flat.data() + (first - unit.begin), at, std::size_t(n) * sizeof(float));
      at += n;
      filled[std::size_t(kind) * units + u] += n;
    });
  }
  for (std::size_t u = 0; u < units; ++u) {
    const auto [b, e] = target(rank_, u);
    for (int kind = 0; kind < 3; ++kind)
      LLMTRAIN_CHECK(filled[std::size_t(kind) * units + u] == e - b, "memory snapshot at step ", found.step,
                     ": unit ", params[u].layout.name, " is not covered by its parts");
  }
  contents.params = &params;
  contents.first_moments = &first_moments;
  contents.second_moments = &second_moments;
}

void MemoryTier::remove_all() {
  wait();
  MPI_Barrier(comm_);
  if (node_rank_ == 0) {  // this run's files only: a memory_dir may be shared with other runs
    std::error_code ec;
    for (const auto& g : list_memory_generations(dir_)) {
      const std::string generation = step_dir(dir_, g.step);
      for (const auto& f : fs::directory_iterator(generation, ec))
        if (read_part_key(f.path().string()) == key_) fs::remove(f.path(), ec);
      fs::remove(generation, ec);  // only when empty
    }
    fs::remove(dir_, ec);  // only when empty
  }
  MPI_Barrier(comm_);
}

}  // namespace llmtrain::ckpt
