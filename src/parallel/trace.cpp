// Chrome trace events of one rank (see trace.hpp).
#include "llmtrain/parallel/trace.hpp"

#include <cstdio>
#include <fstream>

#include "llmtrain/core/error.hpp"
#include "llmtrain/core/quoted.hpp"

namespace llmtrain::parallel {

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
    out << ",\n{\"name\":" << quoted(e.name) << ",\"ph\":\"X\",\"pid\":" << rank_ << ",\"tid\":" << int(e.track)
        << ",\"ts\":" << number << "}";
  }
  out << "\n]}\n";
  LLMTRAIN_CHECK(out.good(), "writing the trace '", path, "' failed");
}

}  // namespace llmtrain::parallel
