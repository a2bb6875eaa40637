// InterruptScope: sigaction with SA_RESETHAND around a flag.
#include "studies/interrupt.h"

#include "sim/core/check.h"

namespace dynamix {
namespace {

// A signal handler can reach nothing but a flag of this type with static storage.
volatile sig_atomic_t signal_received = 0;
volatile sig_atomic_t scope_active = 0;

extern "C" void on_signal(int) { signal_received = 1; }

}  // namespace

InterruptScope::InterruptScope() {
  DYNAMIX_CHECK(scope_active == 0, "nested InterruptScope");
  scope_active = 1;
  signal_received = 0;
  struct sigaction action = {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, nullptr, &previous_interrupt_);
  sigaction(SIGTERM, nullptr, &previous_terminate_);
  // A signal the parent chose to ignore (nohup, a background job of a script) stays ignored.
  if (previous_interrupt_.sa_handler != SIG_IGN) sigaction(SIGINT, &action, nullptr);
  if (previous_terminate_.sa_handler != SIG_IGN) sigaction(SIGTERM, &action, nullptr);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
  scope_active = 0;
}

bool InterruptScope::requested() const { return signal_received != 0; }

void InterruptScope::check() const {
  if (requested()) throw Interrupted();
}

}  // namespace dynamix
