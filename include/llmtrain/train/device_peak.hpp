// MFU's denominator on a CUDA device: the device's dense bf16 tensor-core peak, from NVIDIA's datasheets. MFU
// on a device is reported against the bf16 peak whatever train.precision is (the figure GPU MFUs are quoted
// against), so an fp32 run shows how far it is from what the device can do.
#pragma once

#include <string>

namespace llmtrain::train {

// Flop/s per device for the device named `name` (cudaDeviceProp::name) with compute capability cc_major.cc_minor,
// or 0 for a device not in the table (the job then measures a peak, as on the CPU). Datasheet figures are "with
// sparsity"; the dense peak is half:
//   H100 SXM5 ("NVIDIA H100 80GB HBM3"), 9.0: 1,979 / 2 = 989.4 TFLOP/s   (NVIDIA H100 Tensor Core GPU datasheet)
//   H100 PCIe ("NVIDIA H100 PCIe"),      9.0: 1,513 / 2 = 756.5 TFLOP/s   (the same datasheet)
//   H200 and GH200 ("NVIDIA H200", "NVIDIA GH200 480GB"), 9.0: 989.4 TFLOP/s (H200 / GH200 datasheets)
//   A100 (SXM4 and PCIe, 40 and 80 GB),  8.0: 312 TFLOP/s                 (NVIDIA A100 Tensor Core GPU datasheet)
// H100 NVL and other parts are not in the table.
double peak_for_device(const std::string& name, int cc_major, int cc_minor);

}  // namespace llmtrain::train
