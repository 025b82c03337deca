// Reading the configuration file safely and naming the kinds of filesystem entries (config_file.hpp).
#include "file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "llmtrain/core/error.hpp"

namespace llmtrain::config_file {
namespace {

std::string kind_of_mode(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool stat_mode(const std::string& path, mode_t& mode) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  mode = st.st_mode;
  return true;
}

// Closes the descriptor on every path out of read(), errors included.
struct Descriptor {
  int fd;
  ~Descriptor() { ::close(fd); }
};

}  // namespace

std::string read(const std::string& path) {
  const std::string prefix = path + ": cannot read configuration file: ";
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    LLMTRAIN_FAIL(path, ": cannot open configuration file: ",
                  error == ENOENT ? "no such file" : error == EACCES ? "permission denied" : std::strerror(error));
  }
  const Descriptor file{fd};
  struct stat st {};
  LLMTRAIN_CHECK(::fstat(fd, &st) == 0, prefix, std::strerror(errno));
  // fstat on the open descriptor: what is read is what was checked, even if the path changes meanwhile.
  LLMTRAIN_CHECK(S_ISREG(st.st_mode), prefix, "it is ", kind_of_mode(st.st_mode), ", not a regular file");
  LLMTRAIN_CHECK(static_cast<std::size_t>(st.st_size) <= kMaxConfigBytes, prefix, st.st_size,
                 " bytes, more than the 16 MiB a configuration may have");
  std::string text;
  char buffer[1 << 16];
  while (text.size() <= kMaxConfigBytes) {  // reads one byte past the cap to notice a file that grew
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    LLMTRAIN_CHECK(got >= 0, prefix, std::strerror(errno));
    if (got == 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  LLMTRAIN_CHECK(text.size() <= kMaxConfigBytes, prefix, "it grew past the 16 MiB a configuration may have");
  return text;
}

bool exists(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, mode);
}

bool is_file_or_directory(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, mode) && (S_ISREG(mode) || S_ISDIR(mode));
}

bool is_directory(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, mode) && S_ISDIR(mode);
}

std::string kind_of(const std::string& path) {
  mode_t mode = 0;
  return stat_mode(path, mode) ? kind_of_mode(mode) : "missing";
}

}  // namespace llmtrain::config_file
