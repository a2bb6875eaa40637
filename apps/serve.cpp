// `dynamix serve`: loads policy.pt, listens (loopback by default) and logs every decision.
#include "apps/serve.h"

#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "adapter/server/arbitrator.h"
#include "adapter/server/arbitrator_server.h"
#include "adapter/server/decision_log.h"
#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/learned_policy.h"
#include "apps/policy_factory.h"
#include "apps/serve_options.h"
#include "gym/env_knobs.h"
#include "policies/export/policy_metadata.h"
#include "sim/io/input_error.h"
#include "studies/interrupt.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCommand = "serve";
/// serve's exit status when a policy did not return from a decision.
constexpr int kWedgedStatus = 3;
/// Loading is allowed ten decision deadlines, and never less than this.
constexpr std::chrono::milliseconds kMinLoadDeadline{5000};

void refuse_log(const fs::path& directory, const std::string& why) {
  throw InputError("--log", 0, "", "a new directory or one that dynamix serve wrote",
                   "'" + directory.string() + "', which " + why);
}

}  // namespace

fs::path prepare_log_directory(const fs::path& directory) {
  const RunDirectory log(directory, kCommand, RunDirectory::kAppend, "--log");
  for (const std::string_view name : {kDecisionLogName, kRefusalLogName, kDecisionLogLock}) {
    std::error_code error;
    const fs::file_status file = fs::symlink_status(log.file(name), error);
    if (fs::exists(file) && !fs::is_regular_file(file)) {
      refuse_log(directory, "holds a " + std::string(name) + " that is not a file");
    }
  }
  return directory;
}

std::unique_ptr<Arbitrator> make_arbitrator(const std::string& spec,
                                            const ArbitratorOptions& options) {
  std::error_code error;
  if (spec.starts_with("ppo:")) {
    const PolicyFileSpec file = parse_policy_file(spec.substr(4), "--policy");
    ArbitratorOptions trusting = options;
    if (!file.trusted_sha256.empty()) {
      if (!options.trust_policy_code.empty() &&
          checked_sha256(options.trust_policy_code, "--trust-policy-code") != file.trusted_sha256) {
        throw InputError("--trust-policy-code", 0, "", "the SHA-256 --policy trusts",
                         "'" + options.trust_policy_code + "'");
      }
      trusting.trust_policy_code = file.trusted_sha256;
    }
    return std::make_unique<Arbitrator>(file.file, trusting);
  }
  if (spec.ends_with(".pt") || fs::is_regular_file(spec, error)) {
    return std::make_unique<Arbitrator>(spec, options);
  }
  return std::make_unique<Arbitrator>(make_policy(spec, 1, env_preset("evaluation"), "--policy"),
                                      spec, options);
}

bool ListenAddress::loopback() const {
  if (host == "localhost" || host == "::1") return true;
  in_addr address{};
  return ::inet_pton(AF_INET, host.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

ListenAddress parse_listen_address(const std::string& address) {
  const auto refuse = [&] {
    return InputError("--listen", 0, "",
                      "host:port with a port in [0, 65535] (0 picks a free one; [::1]:port for "
                      "IPv6)",
                      "'" + excerpt(address) + "'");
  };
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) throw refuse();
  const std::string port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    throw refuse();
  }
  ListenAddress parsed{address.substr(0, colon), std::stoi(port)};
  if (parsed.port > 65535) throw refuse();
  if (parsed.host.size() >= 2 && parsed.host.front() == '[' && parsed.host.back() == ']') {
    parsed.host = parsed.host.substr(1, parsed.host.size() - 2);
  } else if (parsed.host.find(':') != std::string::npos) {
    throw refuse();
  }
  return parsed;
}

namespace {

/// A secret or certificate file, whole; InputError naming `option` if unreadable, empty or over
/// `max_bytes`.
std::string read_small_file(const std::string& option, const std::string& file,
                            std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (!in.eof() || text.size() > max_bytes || text.empty()) {
    throw InputError(option, 0, "",
                     "a readable file of 1 to " + std::to_string(max_bytes) + " bytes",
                     "'" + file + "'");
  }
  return text;
}

std::string read_token(const std::string& file) {
  std::string token = read_small_file("--token-file", file, 4096);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.empty() ||
      !std::all_of(token.begin(), token.end(), [](char c) { return c > ' ' && c < 127; })) {
    throw InputError("--token-file", 0, "",
                     "one line of printable ASCII without spaces (the bearer token)",
                     "'" + file + "'");
  }
  return token;
}

/// Ends the process at once when a decision is still inside the policy: its thread cannot be
/// joined, and tearing LibTorch down under it would crash.
void exit_if_wedged(const DecisionRunner& runner, int status) {
  if (!runner.wedged()) return;
  std::cerr << "dynamix serve: a decision is still running inside the policy; exiting without it"
            << std::endl;
  std::cout.flush();
  std::_Exit(status);
}

/// The arbitrator, loaded on a thread of its own: loading runs the archive's code (a module's
/// __setstate__, the forward check_module calls), which may never return. Past `deadline` the
/// process ends with status 2, since that thread cannot be stopped.
std::unique_ptr<Arbitrator> load_arbitrator(const std::string& policy,
                                            const ArbitratorOptions& options,
                                            std::chrono::milliseconds deadline) {
  auto promise = std::make_shared<std::promise<std::unique_ptr<Arbitrator>>>();
  std::future<std::unique_ptr<Arbitrator>> loaded = promise->get_future();
  std::thread([promise, policy, options] {
    try {
      promise->set_value(make_arbitrator(policy, options));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  }).detach();
  if (loaded.wait_for(deadline) != std::future_status::ready) {
    std::cerr << "dynamix: "
              << PolicyFileError(
                     policy, 0, "",
                     "a policy that loads within " + std::to_string(deadline.count()) + " ms",
                     "a load that did not return")
                     .what()
              << std::endl;
    std::_Exit(2);
  }
  return loaded.get();
}

/// The command line, range-checked; nullopt after --help.
std::optional<ServeOptions> parse_serve_args(const std::vector<std::string>& args) {
  ServeOptions a;
  if (parse_knob_command_line(args, serve_knobs(), a)) return std::nullopt;
  return a;
}

/// Where and for whom to listen: the address checked, credentials read, and any address other
/// than loopback refused without them (unless --insecure).
ServerOptions server_options_of(const ServeOptions& a) {
  const ListenAddress listen = parse_listen_address(a.listen);
  ServerOptions server{.host = listen.host, .port = listen.port, .job_id = a.job_id};
  if (!a.token_file.empty()) server.token = read_token(a.token_file);
  if (a.tls_certificate.empty() != a.tls_key.empty() ||
      (!a.tls_client_ca.empty() && a.tls_certificate.empty())) {
    throw InputError("--tls-cert", 0, "",
                     "--tls-cert and --tls-key together (and --tls-client-ca only with them)");
  }
  if (!a.tls_certificate.empty()) {
    server.tls_certificate = read_small_file("--tls-cert", a.tls_certificate, 1 << 20);
    server.tls_key = read_small_file("--tls-key", a.tls_key, 1 << 20);
  }
  if (!a.tls_client_ca.empty()) {
    server.tls_client_ca = read_small_file("--tls-client-ca", a.tls_client_ca, 1 << 20);
  }
  if (!listen.loopback() && server.token.empty() && server.tls_certificate.empty() && !a.insecure) {
    throw InputError("--listen", 0, "",
                     "a loopback address, or credentials for any other (--token-file, --tls-cert "
                     "with --tls-key), or --insecure",
                     "'" + a.listen + "' without credentials");
  }
  // A bearer token sent in clear over a network is anyone's who can read the traffic.
  if (!listen.loopback() && !server.token.empty() && server.tls_certificate.empty()) {
    throw InputError("--token-file", 0, "", "TLS (--tls-cert with --tls-key) off loopback",
                     "a token that would cross '" + a.listen + "' in clear");
  }
  return server;
}

std::string policy_label(const Arbitrator& arbitrator) {
  const wire::PolicyIdentity& identity = arbitrator.identity();
  return arbitrator.policy() ? identity.sha256().substr(0, 12) + " (" + identity.action_base() + ")"
                             : "'" + identity.spec() + "'";
}

}  // namespace

int run_serve(const std::vector<std::string>& args) {
  const std::optional<ServeOptions> parsed = parse_serve_args(args);
  if (!parsed) return 0;
  const ServeOptions& a = *parsed;
  const ServerOptions server_options = server_options_of(a);
  const std::chrono::milliseconds deadline(a.deadline_ms);
  const std::unique_ptr<Arbitrator> loaded =
      load_arbitrator(a.policy,
                      {.workers = static_cast<std::size_t>(a.workers),
                       .guard_rails = a.rails,
                       .policy_sha256 = a.policy_sha256,
                       .trust_policy_code = a.trust_policy_code},
                      std::max(kMinLoadDeadline, 10 * deadline));
  const Arbitrator& arbitrator = *loaded;
  DecisionRunner runner(arbitrator, deadline);
  try {
    if (arbitrator.policy()) runner.warm_up();
  } catch (const InputError& error) {
    if (!runner.wedged()) throw;
    std::cerr << "dynamix: " << error.what() << std::endl;
    exit_if_wedged(runner, 2);
  }
  DecisionLogWriter log(prepare_log_directory(a.log_directory),
                        {.max_bytes = static_cast<std::uint64_t>(a.log_max_mb) << 20,
                         .keep = static_cast<int>(a.log_keep)});
  if (log.repaired_bytes() > 0) {
    std::cerr << "dynamix serve: cut a torn last record of " << log.repaired_bytes()
              << " bytes from " << log.file().string() << std::endl;
  }
  const InterruptScope interrupt;
  ArbitratorServer server(arbitrator, runner, log, server_options, std::cerr);
  std::cout << "dynamix serve: listening on " << a.listen.substr(0, a.listen.rfind(':')) << ':'
            << server.port() << " for " << a.workers << " workers, policy "
            << policy_label(arbitrator) << ", log " << log.file().string() << std::endl;
  // A policy that never returned from a decision leaves nothing to serve with (its thread
  // cannot be stopped): serve exits, status 3, so that a supervisor restarts it, while the
  // workers keep their batches.
  while (!interrupt.requested() && !runner.wedged()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool wedged = !interrupt.requested();
  server.shutdown();
  exit_if_wedged(runner, wedged ? kWedgedStatus : 0);
  return 0;
}

}  // namespace dynamix
