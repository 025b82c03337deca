// MFU's denominator on a CUDA device (train::peak_for_device): the datasheet's dense bf16 peak for each device of
// the table, told apart by name and compute capability, and 0 (measure instead) for anything else.
#include <gtest/gtest.h>

#include "llmtrain/train/device_peak.hpp"

namespace {

using llmtrain::train::peak_for_device;

TEST(PeakForDevice, TheTablesDevicesByTheNamesCudaReports) {
  EXPECT_DOUBLE_EQ(peak_for_device("NVIDIA H100 80GB HBM3", 9, 0), 989.4e12);  // SXM5
  EXPECT_DOUBLE_EQ(peak_for_device("NVIDIA H100 PCIe", 9, 0), 756.5e12);
  EXPECT_DOUBLE_EQ(peak_for_device("NVIDIA H200", 9, 0), 989.4e12);
  EXPECT_DOUBLE_EQ(peak_for_device("NVIDIA GH200 480GB", 9, 0), 989.4e12);
  EXPECT_DOUBLE_EQ(peak_for_device("NVIDIA A100-SXM4-80GB", 8, 0), 312e12);
  EXPECT_DOUBLE_EQ(peak_for_device("NVIDIA A100-PCIE-40GB", 8, 0), 312e12);
}

TEST(PeakForDevice, OtherDevicesAreMeasured) {
  EXPECT_EQ(peak_for_device("NVIDIA H100 NVL", 9, 0), 0.0);  // another peak, not in the table
  EXPECT_EQ(peak_for_device("NVIDIA A10", 8, 6), 0.0);
  EXPECT_EQ(peak_for_device("NVIDIA GeForce RTX 4090", 8, 9), 0.0);
  EXPECT_EQ(peak_for_device("", 0, 0), 0.0);
  // A name without its compute capability is not trusted (an emulator, a renamed part).
  EXPECT_EQ(peak_for_device("NVIDIA H100 80GB HBM3", 8, 0), 0.0);
  EXPECT_EQ(peak_for_device("NVIDIA A100-SXM4-80GB", 9, 0), 0.0);
}

}  // namespace
