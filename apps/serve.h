// `dynamix serve`: the arbitrator that gives real DDP workers the decisions of a policy.pt.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

class Arbitrator;
struct ArbitratorOptions;

/// Runs the subcommand on its arguments (after "serve") until SIGINT or SIGTERM.
int run_serve(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_serve (apps/dynamix_torch.cpp).
inline constexpr Command kServeCommand{"serve",
                                       "serve a policy.pt's decisions to real DDP workers (gRPC)"};

/// --log DIR ready for a DecisionLogWriter, created (with the run-directory marker) when it is
/// new or empty. InputError on --log, before anything is written, when DIR exists and was not
/// written by `dynamix serve` (a user's folder, a file, another command's run directory).
std::filesystem::path prepare_log_directory(const std::filesystem::path& directory);

/// The arbitrator of --policy SPEC: a policy.pt (a file, or ppo:FILE), or any policy that
/// `simulate --policy` takes and that chooses batches itself (goodput:100,
/// goodput+proportional, static:64, ...). InputError naming --policy for an unknown spec.
std::unique_ptr<Arbitrator> make_arbitrator(const std::string& spec,
                                            const ArbitratorOptions& options);

/// A --listen address split and checked: host (brackets of an IPv6 host removed) and a port in
/// [0, 65535] written in decimal digits; InputError naming --listen otherwise.
struct ListenAddress {
  std::string host;
  int port = 0;
  /// 127.0.0.0/8, ::1 or localhost.
  bool loopback() const;
};
ListenAddress parse_listen_address(const std::string& address);

}  // namespace dynamix
