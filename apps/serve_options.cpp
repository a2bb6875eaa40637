// `dynamix serve`'s options table.
#include "apps/serve_options.h"

#include <vector>

#include "apps/policy_factory.h"
#include "gym/env_knobs.h"
#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

using Rows = KnobRows<ServeOptions, ExactNumbers>;
using Row = Knob<ServeOptions>;
using Shared = SharedRows<ServeOptions>;

template <typename Member>
auto field(Member member) {
  return [member](auto& a) -> auto& { return a.*member; };
}

template <typename Member>
auto rail(Member member) {
  return [member](auto& a) -> auto& { return a.rails.*member; };
}

/// The rows serve and replay share: the policy file's pins and the log.
template <typename Target>
struct PolicyFileRows {
  using Rows = KnobRows<Target, ExactNumbers>;

  template <typename Access>
  static Knob<Target> sha256(Access access) {
    return Rows::text({.key = "policy-sha256",
                       .meaning = "refuse any policy file whose SHA-256 is not this (hex); "
                                  "checked on the bytes that are loaded"},
                      access);
  }

  template <typename Access>
  static Knob<Target> trust_code(Access access) {
    return Rows::text({.key = "trust-policy-code",
                       .meaning = "run the TorchScript code of the policy file whose SHA-256 is "
                                  "this (hex), whatever it does; without it, a policy.pt must be "
                                  "what dynamix export writes, and no code of its own runs"},
                      access);
  }

  template <typename Access>
  static Knob<Target> log(Access access) {
    return Rows::text({.key = "log",
                       .meaning = "serve's log directory: decisions.jsonl (appended, rotated), "
                                  "which dynamix replay reads; one serve per directory",
                       .default_value = "required"},
                      access);
  }
};

/// What serves, for which job, and where it logs.
std::vector<Row> policy_rows() {
  return {
      Shared::policy(field(&ServeOptions::policy), policy_names(), "required"),
      PolicyFileRows<ServeOptions>::sha256(field(&ServeOptions::policy_sha256)),
      PolicyFileRows<ServeOptions>::trust_code(field(&ServeOptions::trust_policy_code)),
      Rows::text({.key = "job-id",
                  .meaning = "the one job to decide for (a report's job_id); without it, the "
                             "first job decided for: another job's reports, or a window not "
                             "after the last decided, are refused and logged"},
                 field(&ServeOptions::job_id)),
      Rows::quantity({.key = "workers",
                      .meaning = "workers of the job (every report must have as many)",
                      .default_value = "required"},
                     field(&ServeOptions::workers), integers(1, 1 << 16)),
      PolicyFileRows<ServeOptions>::log(field(&ServeOptions::log_directory)),
      Rows::quantity({.key = "log-max-mb", .meaning = "rotate decisions.jsonl at this size, MiB"},
                     field(&ServeOptions::log_max_mb), integers(1, 1 << 20)),
      Rows::quantity(
          {.key = "log-keep", .meaning = "rotated files kept (decisions.1.jsonl is the newest)"},
          field(&ServeOptions::log_keep), integers(0, 1000))};
}

/// Where to listen and with which credentials.
std::vector<Row> listen_rows() {
  return {
      Rows::text({.key = "listen",
                  .meaning = "host:port to listen on; port 0 picks a free one; an address other "
                             "than loopback needs --token-file or --tls-cert (or --insecure)"},
                 field(&ServeOptions::listen)),
      Rows::text({.key = "token-file",
                  .meaning = "file holding the job's bearer token; every call must carry "
                             "'authorization: Bearer TOKEN'"},
                 field(&ServeOptions::token_file)),
      Rows::text({.key = "tls-cert",
                  .meaning = "PEM server certificate chain: serve over TLS (with --tls-key)"},
                 field(&ServeOptions::tls_certificate)),
      Rows::text({.key = "tls-key", .meaning = "PEM private key of --tls-cert"},
                 field(&ServeOptions::tls_key)),
      Rows::text({.key = "tls-client-ca",
                  .meaning = "PEM CA bundle: require client certificates it signed"},
                 field(&ServeOptions::tls_client_ca)),
      Rows::flag({.key = "insecure",
                  .meaning = "allow an address other than loopback without credentials"},
                 field(&ServeOptions::insecure))};
}

/// What a decision may do, and how long it may take.
std::vector<Row> rail_rows() {
  // The environment's guard rails, declared there; a real job's take no 0 (none): the worker
  // enforces them too.
  const Range factor{.low = 1, .finite = true};
  const auto words = [](const char* key) { return Shared::words_of(*find_knob(env_knobs(), key)); };
  return {
      Rows::quantity(words("max-batch-change"), rail(&GuardRails::max_batch_change), factor),
      Rows::quantity(words("max-lr-change"), rail(&GuardRails::max_lr_change), factor),
      Rows::quantity({.key = "max-lr-factor", .meaning = "largest LR factor a decision may give"},
                     rail(&GuardRails::max_lr_factor), factor),
      Rows::quantity({.key = "decision-deadline-ms",
                      .meaning = "a decision (policy forward included) that takes longer is "
                                 "refused, and so is every later one"},
                     field(&ServeOptions::deadline_ms), integers(1, 600'000))};
}

KnobTable<ServeOptions> make_serve_knobs() {
  std::vector<Row> rows = policy_rows();
  for (auto part : {listen_rows(), rail_rows()}) {
    for (Row& row : part) rows.push_back(std::move(row));
  }
  return Rows::table("",
                     "dynamix serve: answer real workers' window reports with a policy's "
                     "decisions.\n"
                     "A policy.pt must be what dynamix export writes: a file that brings code "
                     "of its own\n"
                     "is refused unless --trust-policy-code names its SHA-256",
                     std::move(rows));
}

KnobTable<ReplayOptions> make_replay_knobs() {
  using Own = PolicyFileRows<ReplayOptions>;
  const auto own = [](auto member) {
    return [member](auto& o) -> auto& { return o.*member; };
  };
  return KnobRows<ReplayOptions, ExactNumbers>::table(
      "", "dynamix replay: recompute a dynamix serve log's decisions and compare them",
      {SharedRows<ReplayOptions>::policy(own(&ReplayOptions::policy), policy_names(), "required"),
       Own::sha256(own(&ReplayOptions::policy_sha256)),
       Own::trust_code(own(&ReplayOptions::trust_policy_code)),
       Own::log(own(&ReplayOptions::log_directory)),
       KnobRows<ReplayOptions, ExactNumbers>::quantity(
           {.key = "show-window",
            .meaning = "print this window's trace: report, observation, logits, batches"},
           own(&ReplayOptions::show_window), integers(0))});
}

}  // namespace

const KnobTable<ReplayOptions>& replay_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<ReplayOptions> table = make_replay_knobs();
  return table;
}

const KnobTable<ServeOptions>& serve_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<ServeOptions> table = make_serve_knobs();
  return table;
}

}  // namespace dynamix
