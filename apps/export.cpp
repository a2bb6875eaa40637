// `dynamix export`: a training checkpoint's policy as TorchScript policy.pt.
#include "apps/export.h"

#include <filesystem>
#include <iostream>

#include "apps/knob_options.h"
#include "apps/small_options.h"
#include "policies/export/torchscript_policy.h"
#include "policies/ppo/checkpoint.h"
#include "sim/io/input_error.h"
#include "studies/run_directory.h"

namespace dynamix {

int run_export(const std::vector<std::string>& args) {
  ExportOptions o;
  if (parse_knob_command_line(args, export_knobs(), o)) return 0;
  const std::string& checkpoint = o.checkpoint;
  const std::string& out = o.out;
  check_output_file(out, "--out", [](const std::filesystem::path& file) {
    try {
      const TorchScriptPolicy existing(file);
      return true;
    } catch (const InputError&) {
      return false;
    }
  });
  // As dynamix.export_policy does: a missing folder is made, and removed again if the export
  // fails (it is dynamix's own then).
  const std::filesystem::path folder = std::filesystem::path(out).parent_path();
  std::filesystem::path made;
  std::error_code error;
  for (std::filesystem::path at = folder; !at.empty() && !std::filesystem::exists(at, error);
       at = at.parent_path()) {
    made = at;
  }
  if (!made.empty()) {
    std::filesystem::create_directories(folder, error);
    if (error) {
      throw InputError("--out", 0, "", "a file in a folder that exists or can be made",
                       "'" + folder.string() + "': " + error.message());
    }
  }
  try {
    export_checkpoint(checkpoint, out);
  } catch (...) {
    if (!made.empty()) std::filesystem::remove_all(made, error);
    throw;
  }
  std::cout << "wrote " << out << '\n';
  return 0;
}

}  // namespace dynamix
