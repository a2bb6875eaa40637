// libFuzzer entry for one target, chosen at compile time by DYNAMIX_FUZZ_TARGET; anything
// that breaks the contract (and is not a known failure) aborts, so libFuzzer saves the input.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/known_failures.h"
#include "tests/fuzz/supervisor.h"

#define DYNAMIX_STRINGIFY_VALUE(x) #x
#define DYNAMIX_STRINGIFY(x) DYNAMIX_STRINGIFY_VALUE(x)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string message = dynamix::fuzz::run_once(
      dynamix::fuzz::DYNAMIX_FUZZ_TARGET, std::string(reinterpret_cast<const char*>(data), size));
  if (message.empty()) return 0;
  // "fuzz_scenario" -> "scenario"
  const std::string_view target =
      std::string_view(DYNAMIX_STRINGIFY(DYNAMIX_FUZZ_TARGET)).substr(5);
  if (dynamix::fuzz::known_failure(target, {}, message) != nullptr) return 0;
  std::fprintf(stderr, "contract broken: %s\n", message.c_str());
  std::abort();
}
