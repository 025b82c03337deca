// Chrome trace events of one rank (see trace.hpp).
#include "llmtrain/parallel/trace.hpp"

#include <cstdio>
#include <fstream>

#include "llmtrain/core/error.hpp"

namespace llmtrain::parallel {
namespace {

// Names are unit names and fixed words; escape what JSON requires all the same.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\u%04x", c);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

Trace::Trace(int rank) : rank_(rank), start_(std::chrono::steady_clock::now()) {}

double Trace::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
}

void Trace::span(Track track, const std::string& name, double begin_us, double end_us) {
  events_.push_back({track, name, begin_us, end_us});
}

void Trace::write(const std::string& path) const {
  std::ofstream out(path);
  LLMTRAIN_CHECK(out.good(), "cannot write the trace '", path, "'");
  out << "{\"traceEvents\":[\n";
  const char* names[] = {"", "compute", "communication"};
  for (int track : {1, 2})
    out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << rank_ << ",\"tid\":" << track
        << ",\"args\":{\"name\":\"" << names[track] << "\"}},\n";
  out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << rank_ << ",\"args\":{\"name\":\"rank " << rank_ << "\"}}";
  char number[64];
  for (const Event& e : events_) {
    std::snprintf(number, sizeof number, "%.3f,\"dur\":%.3f", e.begin_us, e.end_us - e.begin_us);
    out << ",\n{\"name\":" << json_string(e.name) << ",\"ph\":\"X\",\"pid\":" << rank_ << ",\"tid\":" << int(e.track)
        << ",\"ts\":" << number << "}";
  }
  out << "\n]}\n";
  LLMTRAIN_CHECK(out.good(), "writing the trace '", path, "' failed");
}

}  // namespace llmtrain::parallel
