// Runs itself again through reexecute_self() and prints the name the kernel gave the new image
// (/proc/self/comm, what ps, top and pgrep show) and its argv[0].
#include <cstdio>
#include <fstream>
#include <string>

#include "llmtrain/core/reexec.hpp"

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "again") {
    std::string name;
    std::getline(std::ifstream("/proc/self/comm"), name);
    std::printf("after re-executing: comm %s, argv[0] %s\n", name.c_str(), argv[0]);
    return 0;
  }
  char again[] = "again";
  char* arguments[] = {argv[0], again, nullptr};
  llmtrain::reexecute_self(arguments);
  std::perror("reexecute_self");
  return 1;
}
