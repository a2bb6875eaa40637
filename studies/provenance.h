// Where a result comes from: the build that computed it (version, commit, features) and the
// bytes of its inputs, recorded in run.json; the host and the date, which differ between runs of
// the same inputs, in provenance.json beside it, so that the same run still writes the same
// run.json (a resume and other thread counts compare its bytes).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "sim/io/json_writer.h"

namespace dynamix {

/// The commit this build came from ("unknown" outside a git checkout).
std::string build_commit();

/// The parts this build has, as `dynamix --version` lists them: "mpi", "adapter", "python",
/// "ppo" each with whether it is built.
std::vector<std::pair<std::string, bool>> build_features();

/// {"version", "commit", "features": {...}, "inputs": [{"path", "sha256"}, ...]}: `inputs` are
/// the files a run read as it names them (scenario files or built-in scenarios, policy files),
/// each hashed once, in order.
void write_provenance(JsonWriter& json, const std::vector<std::string>& inputs);

/// provenance.json: the build, the host CPU model and logical CPUs, and the UTC date.
void write_host_provenance(const std::filesystem::path& file);

}  // namespace dynamix
