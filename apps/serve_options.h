// What `dynamix serve` and `dynamix replay` take on their command lines, declared once in knob
// tables. Free of gRPC and LibTorch, so that the reference (dynamix config --markdown) lists
// their options in every build.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "adapter/server/guard_rails.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Everything `dynamix serve` takes on its command line.
struct ServeOptions {
  std::string policy;
  std::string policy_sha256;
  std::string trust_policy_code;
  std::string job_id;
  std::string log_directory;
  std::string listen = "127.0.0.1:50051";
  std::string token_file;
  std::string tls_certificate;
  std::string tls_key;
  std::string tls_client_ca;
  bool insecure = false;
  GuardRails rails;
  std::int64_t workers = 0;
  std::int64_t deadline_ms = 1000;
  std::int64_t log_max_mb = 256;
  std::int64_t log_keep = 4;
};

/// Serve's options in --help order, defaults from ServeOptions{}.
const KnobTable<ServeOptions>& serve_knobs();

/// Everything `dynamix replay` takes on its command line: what serve was given.
struct ReplayOptions {
  std::string policy;
  std::string log_directory;
  std::string policy_sha256;
  std::string trust_policy_code;
  std::optional<std::int64_t> show_window;
};

/// Replay's options in --help order, the rows it shares with serve's table declared once.
const KnobTable<ReplayOptions>& replay_knobs();

}  // namespace dynamix
