// The one error path of an SPMD program. run_spmd() starts MPI, runs the body on every rank and turns any
// failure into a clean, quick end of the whole job:
//  - an error every rank meets together (a bad configuration, checked with agree()) is printed once, by
//    the lowest failing rank, and every rank exits with status 1;
//  - an error on some ranks only is printed with its rank (a one-process run names none), and MPI_Abort
//    ends all ranks within seconds, so the others never hang in a collective waiting for it.
// Messages start with the program's name (argv[0]'s file name): "llmtrain-ckpt: error: ...".
#pragma once

#include <functional>

#include "llmtrain/dist/runtime.hpp"

namespace llmtrain::dist {

// Runs body(runtime) on every rank; returns the process exit status.
int run_spmd(int& argc, char**& argv, const std::function<int(Runtime&)>& body);
// The main() of a tool whose only option before MPI starts is help: with -h or --help first, prints `usage`
// and returns 0 without starting MPI; else run_spmd(argc, argv, body).
int run_spmd_tool(int& argc, char**& argv, const char* usage, const std::function<int(Runtime&)>& body);

// Collective: runs step() on every rank; if it throws on any rank, every rank throws the message of the
// lowest failing rank (as a job-wide error that run_spmd prints once). All ranks must call it together.
void agree(const Runtime& runtime, const std::function<void()>& step);

}  // namespace llmtrain::dist
