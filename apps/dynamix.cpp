// dynamix: every command without LibTorch, whose static initialisation costs ~0.8 s per process.
// What needs it (train, export, band, serve, replay, a ppo:FILE policy) says so with NeedsLibTorch,
// and dynamix-torch, installed beside it, runs the same command line in this process's place,
// with the CPU kernels of its libraries pinned (apps/portable_kernels.h).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "apps/commands.h"
#include "apps/portable_kernels.h"
#include "dynamix_config.h"
#include "sim/io/input_error.h"

namespace {

/// Runs dynamix-torch, from this executable's folder, with the same arguments and this
/// environment with the kernels pinned, which its libraries read as they load; returns only by
/// throwing. A build without LibTorch has none to run.
int run_with_torch([[maybe_unused]] char** argv,
                   [[maybe_unused]] const dynamix::NeedsLibTorch& needs) {
#ifndef DYNAMIX_PPO
  throw dynamix::InputError(
      needs.source(), 0, "",
      "a dynamix with LibTorch (this build has none: meson setup -Dppo=enabled)",
      "'" + needs.request() + "'");
#else
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path torch = self.parent_path() / "dynamix-torch";
  std::vector<std::string> environment =
      dynamix::with_pinned_kernels(dynamix::process_environment());
  std::vector<char*> envp;
  envp.reserve(environment.size() + 1);
  for (std::string& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  ::execve(torch.c_str(), argv, envp.data());
  throw std::runtime_error("this command needs LibTorch, which dynamix leaves to dynamix-torch; " +
                           torch.string() + " did not start: " + std::strerror(errno));
#endif
}

}  // namespace

int main(int argc, char** argv) {
  return dynamix::run_dynamix(
      dynamix::command_table(), {argv + 1, argv + argc},
      [argv](const dynamix::NeedsLibTorch& needs) { return run_with_torch(argv, needs); });
}
