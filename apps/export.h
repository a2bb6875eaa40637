// `dynamix export`: a training checkpoint's policy as TorchScript policy.pt.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_export(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_export (apps/dynamix_torch.cpp).
inline constexpr Command kExportCommand{"export", "export a training checkpoint as TorchScript"};

}  // namespace dynamix
