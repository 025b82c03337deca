// Initialises Kokkos once for a GoogleTest program and finalises it after the last test (Views must not
// outlive Kokkos, so tests create theirs inside test bodies only).
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>

namespace {

class KokkosEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int argc = 0;
    Kokkos::initialize(argc, nullptr);
  }
  void TearDown() override { Kokkos::finalize(); }
};

const auto* const kRegistered = ::testing::AddGlobalTestEnvironment(new KokkosEnvironment);

}  // namespace
