// Fork-per-crash supervision: the child runs inputs in order and reports exceptions through a
// pipe; the parent notes the input a dead or hung child was on and restarts after it.
#include "tests/fuzz/supervisor.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

#include "sim/core/check.h"

#if defined(__SANITIZE_ADDRESS__)
#define DYNAMIX_FUZZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DYNAMIX_FUZZ_ASAN 1
#endif
#endif

namespace dynamix::fuzz {
namespace {

#ifndef DYNAMIX_FUZZ_ASAN
/// Without AddressSanitizer (which reserves terabytes of address space) a child may not map
/// more than this; under it, ASAN_OPTIONS' max_allocation_size_mb bounds single allocations.
constexpr rlim_t kAddressSpaceLimit = rlim_t{8} << 30;
#endif
/// Lines of a dead child's stderr kept in its failure message.
constexpr std::size_t kReportLines = 12;

/// Where the child is, shared with the parent.
struct Progress {
  std::atomic<std::int64_t> index;
  std::atomic<std::int64_t> started_ns;
};

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string type_name(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? name.get() : type.name();
}

void write_all(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written <= 0) ::_exit(3);
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

[[noreturn]] void run_child(Target target, const std::vector<std::string>& inputs,
                            std::size_t first, Progress* progress, int results_fd, int stderr_fd) {
  ::dup2(stderr_fd, STDERR_FILENO);
#ifndef DYNAMIX_FUZZ_ASAN
  const rlimit limit{kAddressSpaceLimit, kAddressSpaceLimit};
  ::setrlimit(RLIMIT_AS, &limit);
#endif
  for (std::size_t i = first; i < inputs.size(); ++i) {
    progress->started_ns = steady_ns();
    progress->index = static_cast<std::int64_t>(i);
    const std::string message = run_once(target, inputs[i]);
    if (!message.empty()) {
      const std::uint64_t header[2] = {i, message.size()};
      write_all(results_fd, header, sizeof header);
      write_all(results_fd, message.data(), message.size());
    }
  }
  ::_exit(0);
}

/// The sanitizer summary and the first frames of a dead child's stderr.
std::string report_excerpt(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::string summary;
  std::string frames;
  std::size_t kept = 0;
  while (std::getline(in, line)) {
    if (line.find("SUMMARY:") != std::string::npos ||
        line.find("runtime error") != std::string::npos ||
        line.find("ERROR:") != std::string::npos) {
      summary += (summary.empty() ? "" : " | ") + line;
    } else if (line.find("    #") == 0 && kept < kReportLines) {
      frames += "\n      " + line.substr(4);
      ++kept;
    }
  }
  return summary + frames;
}

/// Reads the child's records until it closes the pipe or overruns the time limit.
bool read_results(int fd, pid_t child, const Progress& progress, const SupervisorOptions& options,
                  std::vector<Failure>& failures) {
  std::string buffer;
  const std::int64_t limit_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(options.time_limit).count();
  while (true) {
    pollfd poll_fd{fd, POLLIN, 0};
    const int ready = ::poll(&poll_fd, 1, 200);
    if (ready > 0) {
      char chunk[4096];
      const ssize_t got = ::read(fd, chunk, sizeof chunk);
      if (got <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(got));
      while (buffer.size() >= 16) {
        std::uint64_t header[2];
        std::memcpy(header, buffer.data(), sizeof header);
        if (buffer.size() < 16 + header[1]) break;
        failures.push_back({header[0], buffer.substr(16, header[1])});
        buffer.erase(0, 16 + header[1]);
      }
    } else if (steady_ns() - progress.started_ns > limit_ns) {
      ::kill(child, SIGKILL);
      return true;
    }
  }
}

}  // namespace

std::string run_once(Target target, const std::string& input) {
  try {
    target(std::span(reinterpret_cast<const std::uint8_t*>(input.data()), input.size()));
    return {};
  } catch (const InvariantError& error) {
    return std::string("InvariantError (exit 70): ") + error.what();
  } catch (const AcceptedInvalidInput& error) {
    return std::string("accepted invalid input: ") + error.what();
  } catch (const std::exception& error) {
    return type_name(typeid(error)) + " (exit 1): " + error.what();
  } catch (...) {
    return "a non-standard exception (exit 1)";
  }
}

std::vector<Failure> run_supervised(Target target, const std::vector<std::string>& inputs,
                                    const SupervisorOptions& options) {
  void* shared =
      ::mmap(nullptr, sizeof(Progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error("mmap of the fuzz progress failed");
  auto* progress = new (shared) Progress{};
  const std::string stderr_path = (std::filesystem::temp_directory_path() /
                                   ("dynamix-fuzz-stderr-" + std::to_string(::getpid())))
                                      .string();
  std::vector<Failure> failures;
  std::size_t next = 0;
  while (next < inputs.size()) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    const int stderr_fd = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    progress->index = static_cast<std::int64_t>(next);
    progress->started_ns = steady_ns();
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error("fork failed");
    if (child == 0) {
      ::close(pipe_fds[0]);
      run_child(target, inputs, next, progress, pipe_fds[1], stderr_fd);
    }
    ::close(pipe_fds[1]);
    ::close(stderr_fd);
    const bool timed_out = read_results(pipe_fds[0], child, *progress, options, failures);
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    std::error_code ignored;
    std::filesystem::remove_all(scratch_directory(child), ignored);
    if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
    const auto index = static_cast<std::size_t>(progress->index.load());
    std::ostringstream message;
    if (timed_out) {
      message << "timed out after " << options.time_limit.count() << " s";
    } else if (WIFSIGNALED(status)) {
      message << "crashed (signal " << WTERMSIG(status) << "): " << report_excerpt(stderr_path);
    } else {
      message << "crashed (exit " << WEXITSTATUS(status) << "): " << report_excerpt(stderr_path);
    }
    failures.push_back({index, message.str()});
    next = index + 1;
  }
  std::filesystem::remove(stderr_path);
  std::sort(failures.begin(), failures.end(),
            [](const Failure& a, const Failure& b) { return a.index < b.index; });
  ::munmap(shared, sizeof(Progress));
  return failures;
}

}  // namespace dynamix::fuzz
