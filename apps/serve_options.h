// What `dynamix serve` takes on its command line, declared once in a knob table. Free of gRPC
// and LibTorch, so that the reference (dynamix config --markdown) lists serve's options in
// every build.
#pragma once

#include <cstdint>
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

}  // namespace dynamix
