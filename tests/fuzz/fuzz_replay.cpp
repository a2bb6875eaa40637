// Replays saved fuzz inputs through one target in this process, for debugging a failure:
// `fuzz_replay TARGET FILE...` prints each file's outcome and exits 1 if any broke the contract.
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/supervisor.h"

int main(int argc, char** argv) {
  using namespace dynamix::fuzz;
  const NamedTarget* target = argc > 2 ? find_target(argv[1]) : nullptr;
  if (target == nullptr) {
    std::cerr << "usage: fuzz_replay TARGET FILE...\ntargets:\n";
    for (const NamedTarget& each : targets()) {
      std::cerr << "  " << each.name << ": " << each.input << '\n';
    }
    return 2;
  }
  int status = 0;
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string message = run_once(target->run, text.str());
    std::cout << argv[i] << ": " << (message.empty() ? "ok (accepted or InputError)" : message)
              << '\n';
    if (!message.empty()) status = 1;
  }
  return status;
}
