// The tokenizer's ASCII scan built for avx2 (flags in src/CMakeLists.txt; see ascii_scan.hpp).
#include "ascii_scan.hpp"

namespace llmtrain::tokenizer::isa {
namespace {
#define LLMTRAIN_ISA_NAME "avx2"
#define LLMTRAIN_ASCII_BLOCK 128
#include "ascii_scan.inc"
}  // namespace

const AsciiScanKernel& ascii_scan_avx2() { return kAsciiScan; }

}  // namespace llmtrain::tokenizer::isa
