// `dynamix report`: scripts/report.py under Debian's Python, spawned without a shell so the
// arguments reach it as given; its options, help and errors are its own.
#include "apps/report.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "apps/child_process.h"
#include "dynamix_config.h"

namespace dynamix {
namespace {

// The Python the build found (dynamix_config.h): Debian's, with nbclient, nbconvert,
// matplotlib and pandas beside numpy and torch.
constexpr const char* kPython = DYNAMIX_PYTHON;

/// The notebooks are read from the source tree this executable was built from.
std::filesystem::path report_script() {
  return std::filesystem::path(DYNAMIX_SOURCE_ROOT) / "scripts" / "report.py";
}

/// This process's environment with DYNAMIX set to this executable, whose `config --markdown`
/// gives the figures their axis labels.
std::vector<std::string> child_environment() {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, "DYNAMIX=", 8) != 0) environment.emplace_back(*entry);
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) environment.push_back("DYNAMIX=" + self.string());
  return environment;
}

}  // namespace

int run_report(const std::vector<std::string>& args) {
  const std::filesystem::path script = report_script();
  if (!std::filesystem::is_regular_file(script)) {
    throw std::runtime_error("dynamix report runs " + script.string() +
                             " from the source tree it was built from, which is not there");
  }
  std::vector<std::string> command = {kPython, script.string()};
  command.insert(command.end(), args.begin(), args.end());
  const ChildResult result = run_child(command, {.environment = child_environment()});
  if (result.start_error != 0) {
    throw std::runtime_error(std::string("dynamix report needs Debian's ") + kPython +
                             " (python3-nbclient, -nbconvert, -matplotlib, -pandas): " +
                             std::strerror(result.start_error));
  }
  return result.status();
}

}  // namespace dynamix
