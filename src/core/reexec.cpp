// reexecute_self(): see include/llmtrain/core/reexec.hpp.
#include "llmtrain/core/reexec.hpp"

#include <limits.h>
#include <unistd.h>

namespace llmtrain {

void reexecute_self(char** argv) {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length > 0) {
    self[length] = '\0';
    execv(self, argv);
  }
  execv("/proc/self/exe", argv);
}

}  // namespace llmtrain
