// `dynamix serve`: loads policy.pt, listens (loopback by default) and logs every decision.
#include "apps/serve.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "adapter/server/arbitrator.h"
#include "adapter/server/arbitrator_server.h"
#include "adapter/server/decision_log.h"
#include "apps/command_line.h"
#include "apps/interrupt.h"
#include "apps/run_directory.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr std::string_view kCommand = "serve";

std::string marker_text(const fs::path& directory) {
  std::ifstream in(directory / RunDirectory::kMarker);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void refuse_log(const fs::path& directory, const std::string& why) {
  throw InputError("--log", 0, "", "a new directory or one that dynamix serve wrote",
                   "'" + directory.string() + "', which " + why);
}

}  // namespace

fs::path prepare_log_directory(const fs::path& directory) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(directory, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) refuse_log(directory, "is not a directory");
    if (RunDirectory::is_run_directory(directory)) {
      std::string ours = " ";
      ours.append(kCommand).push_back('\n');
      if (marker_text(directory).find(ours) == std::string::npos) {
        refuse_log(directory, "another dynamix command wrote");
      }
    } else if (!fs::is_empty(directory, error)) {
      refuse_log(directory, "exists and was not written by dynamix");
    }
  }
  const fs::path log = directory / kDecisionLogName;
  if (fs::exists(fs::symlink_status(log, error)) &&
      !fs::is_regular_file(fs::symlink_status(log, error))) {
    refuse_log(directory, "holds a " + std::string(kDecisionLogName) + " that is not a file");
  }
  fs::create_directories(directory, error);
  if (error) refuse_log(directory, "cannot be created (" + error.message() + ")");
  if (!RunDirectory::is_run_directory(directory)) {
    std::ofstream marker(directory / RunDirectory::kMarker);
    marker << "dynamix " << kDynamixVersion << ' ' << kCommand << '\n';
    if (!marker.flush()) refuse_log(directory, "is not writable");
  }
  return log;
}

int run_serve(const std::vector<std::string>& args) {
  std::string policy;
  std::string log_directory;
  std::string listen = "127.0.0.1:50051";
  std::int64_t workers = 0;
  po::options_description options(
      "dynamix serve: answer real workers' window reports with a policy.pt's decisions");
  // clang-format off
  options.add_options()
      ("help,h", "print this help")
      ("policy", po::value(&policy)->required(), "TorchScript policy.pt (dynamix train or export)")
      ("workers", po::value(&workers)->required(), "workers of the job (every report must have as many)")
      ("log", po::value(&log_directory)->required(), "directory for decisions.jsonl (appended; dynamix replay reads it)")
      ("listen", po::value(&listen)->default_value(listen), "host:port to listen on; port 0 picks a free one; loopback unless told otherwise");
  // clang-format on
  po::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  require_in_range("--workers", workers, 1, 1 << 16);
  const Arbitrator arbitrator(policy, static_cast<std::size_t>(workers));
  DecisionLogWriter log(prepare_log_directory(log_directory));
  const InterruptScope interrupt;
  ArbitratorServer server(arbitrator, log, listen, std::cerr);
  std::cout << "dynamix serve: listening on " << listen.substr(0, listen.rfind(':')) << ':'
            << server.port() << " for " << workers << " workers, policy "
            << arbitrator.identity().sha256().substr(0, 12) << " ("
            << arbitrator.identity().action_base() << "), log "
            << (fs::path(log_directory) / kDecisionLogName).string() << std::endl;
  while (!interrupt.requested()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  server.shutdown();
  return 0;
}

}  // namespace dynamix
