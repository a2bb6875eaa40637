// libFuzzer entry for one target, chosen at compile time by DYNAMIX_FUZZ_TARGET; anything
// that breaks the contract aborts, so libFuzzer saves the input as a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/supervisor.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string message = dynamix::fuzz::run_once(
      dynamix::fuzz::DYNAMIX_FUZZ_TARGET, std::string(reinterpret_cast<const char*>(data), size));
  if (!message.empty()) {
    std::fprintf(stderr, "contract broken: %s\n", message.c_str());
    std::abort();
  }
  return 0;
}
