// Re-executing the running program in place (same pid, same arguments), e.g. after changing an environment
// variable that a library reads only when it is loaded (model/blas_runtime.hpp).
#pragma once

namespace llmtrain {

// execv()s this program's own file with `argv`. The kernel names a process after the file it executes, so the
// resolved path is run rather than /proc/self/exe: the name ps, top and pgrep show (/proc/<pid>/comm) stays
// the program's ("llmtrain"), not "exe". /proc/self/exe is the fallback, for a binary replaced or deleted
// since it started. Returns only if both fail (errno says why).
void reexecute_self(char** argv);

}  // namespace llmtrain
