// `dynamix serve`'s options table.
#include "apps/serve_options.h"

#include <vector>

namespace dynamix {

namespace {

using Rows = KnobRows<ServeOptions, ExactNumbers>;
using Row = Knob<ServeOptions>;

template <typename Member>
auto field(Member member) {
  return [member](auto& a) -> auto& { return a.*member; };
}

template <typename Member>
auto rail(Member member) {
  return [member](auto& a) -> auto& { return a.rails.*member; };
}

/// What serves, for which job, and where it logs.
std::vector<Row> policy_rows() {
  return {
      Rows::text({.key = "policy",
                  .meaning = "what decides: a policy.pt (dynamix train or export; ppo:FILE also "
                             "works) or any policy simulate --policy takes that chooses batches "
                             "itself (goodput:100, goodput+proportional, static:64, ...)",
                  .default_value = "required"},
                 field(&ServeOptions::policy)),
      Rows::text({.key = "policy-sha256",
                  .meaning = "refuse any policy file whose SHA-256 is not this (hex); checked on "
                             "the bytes that are loaded"},
                 field(&ServeOptions::policy_sha256)),
      Rows::text({.key = "trust-policy-code",
                  .meaning = "run the TorchScript code of the policy file whose SHA-256 is this "
                             "(hex), whatever it does; without it, a policy.pt must be what "
                             "dynamix export writes, and no code of its own runs"},
                 field(&ServeOptions::trust_policy_code)),
      Rows::text({.key = "job-id",
                  .meaning = "the one job to decide for (a report's job_id); without it, the "
                             "first job decided for: another job's reports, or a window not "
                             "after the last decided, are refused and logged"},
                 field(&ServeOptions::job_id)),
      Rows::quantity({.key = "workers",
                      .meaning = "workers of the job (every report must have as many)",
                      .default_value = "required"},
                     field(&ServeOptions::workers), integers(1, 1 << 16)),
      Rows::text({.key = "log",
                  .meaning = "directory for decisions.jsonl (appended; rotated; dynamix replay "
                             "reads it); one serve per directory",
                  .default_value = "required"},
                 field(&ServeOptions::log_directory)),
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
  const Range factor{.low = 1, .finite = true};
  return {
      Rows::quantity({.key = "max-batch-change",
                      .meaning = "largest factor one decision may change the global batch by"},
                     rail(&GuardRails::max_batch_change), factor),
      Rows::quantity({.key = "max-lr-change",
                      .meaning = "largest factor one decision may change the LR factor by"},
                     rail(&GuardRails::max_lr_change), factor),
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

}  // namespace

const KnobTable<ServeOptions>& serve_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<ServeOptions> table = make_serve_knobs();
  return table;
}

}  // namespace dynamix
