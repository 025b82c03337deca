// Listing of a dataset's files (see corpus.hpp).
#include "corpus.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "llmtrain/core/error.hpp"

namespace llmtrain::data {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void add_file(const std::string& path, std::vector<CorpusFile>& out) {
  FileFormat format;
  if (!corpus_format(path, format)) return;
  struct stat st {};
  LLMTRAIN_CHECK(::stat(path.c_str(), &st) == 0, path, ": cannot stat corpus file");
  CorpusFile f;
  f.path = path;
  f.size = static_cast<std::uint64_t>(st.st_size);
  f.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  f.inode = static_cast<std::uint64_t>(st.st_ino);
  f.format = format;
  out.push_back(f);
}

void add_path(const std::string& path, std::vector<CorpusFile>& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::follow_directory_symlink, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      LLMTRAIN_CHECK(!ec, path, ": cannot walk directory: ", ec.message());
      if (it->is_regular_file(ec)) add_file(it->path().string(), out);
    }
    LLMTRAIN_CHECK(!ec, path, ": cannot walk directory: ", ec.message());
  } else if (fs::exists(path, ec)) {
    FileFormat format;
    LLMTRAIN_CHECK(corpus_format(path, format), path,
                   ": not a corpus file (expected .jsonl, .jsonl.gz, .jsonl.zst, .txt, .ltok or a Megatron .bin)");
    add_file(path, out);
  }
}

}  // namespace

bool corpus_format(const std::string& path, FileFormat& format) {
  if (ends_with(path, ".jsonl") || ends_with(path, ".json")) {
    format = FileFormat::jsonl;
  } else if (ends_with(path, ".jsonl.gz") || ends_with(path, ".json.gz")) {
    format = FileFormat::jsonl_gz;
  } else if (ends_with(path, ".jsonl.zst") || ends_with(path, ".json.zst")) {
    format = FileFormat::jsonl_zst;
  } else if (ends_with(path, ".txt")) {
    format = FileFormat::text;
  } else if (ends_with(path, ".ltok")) {
    format = FileFormat::ltok;
  } else if (ends_with(path, ".bin")) {  // with its .idx next to it
    format = FileFormat::megatron;
  } else {
    return false;
  }
  return true;
}

DatasetFiles list_dataset(const DatasetSpec& spec) {
  DatasetFiles ds;
  ds.name = spec.name;
  ds.field = spec.field;
  std::vector<CorpusFile> files;
  if (spec.path.find_first_of("*?[") != std::string::npos) {
    glob_t g{};
    int rc = ::glob(spec.path.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) add_path(g.gl_pathv[i], files);
    }
    ::globfree(&g);
    LLMTRAIN_CHECK(rc == 0 || rc == GLOB_NOMATCH, "dataset '", spec.name, "': glob failed on ", spec.path);
  } else {
    add_path(spec.path, files);
  }
  std::sort(files.begin(), files.end(), [](const CorpusFile& a, const CorpusFile& b) { return a.path < b.path; });
  files.erase(std::unique(files.begin(), files.end(),
                          [](const CorpusFile& a, const CorpusFile& b) { return a.path == b.path; }),
              files.end());
  for (CorpusFile& f : files) {
    if (f.size == 0) {
      ds.empty_files.push_back(f.path);
      continue;
    }
    f.start = ds.split_bytes;
    ds.total_bytes += f.size;
    if (splittable(f.format)) ds.split_bytes += f.size;
    else ds.whole_files.push_back(static_cast<std::uint32_t>(ds.files.size()));
    ds.files.push_back(f);
  }
  LLMTRAIN_CHECK(!ds.files.empty(), "dataset '", spec.name, "': no non-empty .jsonl, .jsonl.gz, .jsonl.zst or .txt file at '",
                 spec.path, "'");
  return ds;
}

}  // namespace llmtrain::data
