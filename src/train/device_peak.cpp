// peak_for_device(): see device_peak.hpp for the figures and their sources.
#include "llmtrain/train/device_peak.hpp"

namespace llmtrain::train {
namespace {

bool has(const std::string& name, const char* part) { return name.find(part) != std::string::npos; }

}  // namespace

double peak_for_device(const std::string& name, int cc_major, int cc_minor) {
  constexpr double kTera = 1e12;
  if (cc_major == 9 && cc_minor == 0) {
    if (has(name, "H200")) return 989.4 * kTera;  // H200 and GH200
    if (has(name, "H100") && has(name, "PCIe")) return 756.5 * kTera;
    if (has(name, "H100") && !has(name, "NVL")) return 989.4 * kTera;  // SXM5
  }
  if (cc_major == 8 && cc_minor == 0 && has(name, "A100")) return 312.0 * kTera;
  return 0.0;
}

}  // namespace llmtrain::train
