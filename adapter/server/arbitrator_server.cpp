// The gRPC Arbitrator service: one decision at a time under a deadline, each logged before it is
// answered, behind gRPC's resource quota and connection limits.
#include "adapter/server/arbitrator_server.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/support/server_interceptor.h>
#include <openssl/crypto.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "adapter/proto/dynamix.grpc.pb.h"
#include "policies/export/policy_metadata.h"
#include "sim/io/input_error.h"

namespace dynamix {

struct DecisionRunner::State {
  explicit State(const Arbitrator& arbitrator_, std::chrono::milliseconds deadline_)
      : arbitrator(arbitrator_), deadline(deadline_) {}

  const Arbitrator& arbitrator;
  const std::chrono::milliseconds deadline;
  std::mutex mutex;
  std::condition_variable wake;
  bool pending = false;
  bool done = false;
  bool stop = false;
  bool wedged = false;
  // The job: written by the caller before `pending`, read by the thread until `done`.
  wire::WindowReport report;
  wire::LogRecord record;
  std::exception_ptr error;
  std::thread thread;

  void run() {
    std::unique_lock lock(mutex);
    while (true) {
      wake.wait(lock, [&] { return pending || stop; });
      if (stop) return;
      lock.unlock();
      std::exception_ptr failure;
      try {
        arbitrator.decide(report, record);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      error = failure;
      pending = false;
      done = true;
      wake.notify_all();
    }
  }
};

DecisionRunner::DecisionRunner(const Arbitrator& arbitrator, std::chrono::milliseconds deadline)
    : state_(std::make_shared<State>(arbitrator, deadline)) {
  // The thread holds the state: a wedged thread outlives the runner without dangling.
  state_->thread = std::thread([state = state_] { state->run(); });
}

DecisionRunner::~DecisionRunner() {
  {
    const std::lock_guard lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  if (wedged()) {
    state_->thread.detach();
  } else {
    state_->thread.join();
  }
}

bool DecisionRunner::wedged() const {
  const std::lock_guard lock(state_->mutex);
  return state_->wedged;
}

void DecisionRunner::decide(const wire::WindowReport& report, wire::LogRecord& record) {
  State& state = *state_;
  std::unique_lock lock(state.mutex);
  if (state.wedged) {
    throw PolicyTimeout("the policy has not returned from an earlier decision (deadline " +
                        std::to_string(state.deadline.count()) +
                        " ms); restart dynamix serve with a policy that returns");
  }
  state.report = report;
  state.done = false;
  state.pending = true;
  state.wake.notify_all();
  if (!state.wake.wait_for(lock, state.deadline, [&] { return state.done; })) {
    state.wedged = true;
    throw PolicyTimeout("the policy did not decide within its deadline of " +
                        std::to_string(state.deadline.count()) + " ms");
  }
  if (state.error) std::rethrow_exception(std::exchange(state.error, nullptr));
  record.Swap(&state.record);
}

void DecisionRunner::warm_up() {
  wire::LogRecord record;
  try {
    decide(Arbitrator::sample_report(state_->arbitrator.workers()), record);
  } catch (const PolicyTimeout&) {
    throw PolicyFileError(state_->arbitrator.policy()->file().string(), 0, "",
                          "a policy that decides within --decision-deadline-ms (" +
                              std::to_string(state_->deadline.count()) + " ms)",
                          "a warm-up decision that did not return in time");
  }
}

namespace {

constexpr std::string_view kBearer = "Bearer ";

class DecideService final : public wire::Arbitrator::Service {
 public:
  DecideService(const Arbitrator& arbitrator, DecisionRunner& runner, DecisionLogWriter& log,
                const ServerOptions& options, std::ostream& messages)
      : workers_(arbitrator.workers()),
        runner_(runner),
        log_(log),
        token_digest_(options.token.empty() ? "" : sha256_of(options.token)),
        messages_(messages),
        sequence_(options.job_id) {}

  grpc::Status Decide(grpc::ServerContext* context, const wire::WindowReport* report,
                      wire::Decision* decision) override {
    if (!authorized(*context)) return unauthenticated(context->peer());
    const std::lock_guard lock(mutex_);
    const std::size_t bytes = report->ByteSizeLong();
    if (bytes > max_report_bytes(workers_)) {
      wire::WindowReport excerpted;
      excerpted.set_job_id(excerpt(report->job_id()));
      excerpted.set_window_index(report->window_index());
      excerpted.set_iteration(report->iteration());
      return refuse(excerpted, grpc::StatusCode::RESOURCE_EXHAUSTED,
                    "a report of " + std::to_string(bytes) + " bytes, above the " +
                        std::to_string(max_report_bytes(workers_)) + "-byte limit for " +
                        std::to_string(workers_) + " workers");
    }
    try {
      check_report(*report, workers_);  // a malformed report is told its fault first
      sequence_.check(*report);
    } catch (const ReportError& error) {
      return refuse(*report, grpc::StatusCode::INVALID_ARGUMENT, error.what());
    } catch (const SequenceError& error) {
      return refuse(*report,
                    error.duplicate ? grpc::StatusCode::ALREADY_EXISTS
                                    : grpc::StatusCode::FAILED_PRECONDITION,
                    error.what());
    }
    try {
      runner_.decide(*report, record_);
    } catch (const ReportError& error) {
      return refuse(*report, grpc::StatusCode::INVALID_ARGUMENT, error.what());
    } catch (const PolicyTimeout& error) {
      return refuse(*report, grpc::StatusCode::UNAVAILABLE, error.what());
    } catch (const PolicyOutputError& error) {
      return refuse(*report, grpc::StatusCode::INTERNAL, error.what());
    } catch (const std::exception& error) {
      return refuse(*report, grpc::StatusCode::INTERNAL, error.what());
    }
    try {
      log_.append(record_);
    } catch (const std::exception& error) {
      messages_ << "dynamix serve: " << error.what() << std::endl;
      return {grpc::StatusCode::UNAVAILABLE, error.what()};
    }
    sequence_.decided(*report);
    *decision = record_.decision();
    return grpc::Status::OK;
  }

  /// A request whose bytes are not a WindowReport: gRPC answers it INTERNAL without calling
  /// Decide; from a caller with the token (or to a serve without one) it is logged as refused.
  void malformed(const grpc::ServerContextBase& context) {
    if (!authorized(context)) {
      unauthenticated(context.peer());
      return;
    }
    const std::lock_guard lock(mutex_);
    refuse(wire::WindowReport(), grpc::StatusCode::INTERNAL,
           "its bytes are not a WindowReport protobuf",
           "request refused: ", "a call from " + excerpt(context.peer()));
  }

 private:
  /// The token's digest compared in constant time: neither its bytes nor its length leak.
  bool authorized(const grpc::ServerContextBase& context) const {
    if (token_digest_.empty()) return true;
    const auto [first, last] = context.client_metadata().equal_range("authorization");
    if (first == last) return false;
    std::string_view value(first->second.data(), first->second.size());
    if (!value.starts_with(kBearer)) return false;
    value.remove_prefix(kBearer.size());
    const std::string digest = sha256_of(value);
    return CRYPTO_memcmp(digest.data(), token_digest_.data(), digest.size()) == 0;
  }

  /// Not logged to the decision log (anyone could fill it); one line per 1,000 on `messages`.
  grpc::Status unauthenticated(const std::string& peer) {
    const std::lock_guard lock(mutex_);
    if (unauthenticated_++ % 1000 == 0) {
      messages_ << "dynamix serve: refused " << unauthenticated_
                << " call(s) without the bearer token, the latest from " << excerpt(peer)
                << std::endl;
    }
    return {grpc::StatusCode::UNAUTHENTICATED,
            "expected metadata 'authorization: Bearer TOKEN' with dynamix serve's token"};
  }

  /// Logs `report` refused (`what` + `why`), says so on `messages_` naming `caller` (by default
  /// the report's job and window), and returns the status to answer with.
  grpc::Status refuse(const wire::WindowReport& report, grpc::StatusCode code,
                      const std::string& why,
                      const std::string& what = "report refused: ", std::string caller = "") {
    const std::string message = what + why;
    if (caller.empty()) {
      caller =
          "job " + excerpt(report.job_id()) + " window " + std::to_string(report.window_index());
    }
    note_refusal(caller + ": " + message);
    record_.Clear();
    *record_.mutable_report() = report;
    record_.set_refusal(message);
    try {
      log_.append(record_);
    } catch (const std::exception& error) {
      messages_ << "dynamix serve: " << error.what() << std::endl;
    }
    return {code, message};
  }

  /// The first kLoudRefusals refusals a line each on `messages`, then one line per
  /// kRefusalSummaryInterval at most, counting the rest: a flood cannot grow stderr unbounded.
  void note_refusal(const std::string& line) {
    const auto now = std::chrono::steady_clock::now();
    if (refusals_++ < kLoudRefusals) {
      messages_ << "dynamix serve: " << line << std::endl;
      last_summary_ = now;
      return;
    }
    ++unsummarized_;
    if (now - last_summary_ >= kRefusalSummaryInterval) {
      messages_ << "dynamix serve: " << unsummarized_ << " more report(s) refused (" << refusals_
                << " in all), the latest " << line << std::endl;
      unsummarized_ = 0;
      last_summary_ = now;
    }
  }

  static constexpr std::uint64_t kLoudRefusals = 20;
  static constexpr std::chrono::seconds kRefusalSummaryInterval{10};

  const std::size_t workers_;
  DecisionRunner& runner_;
  DecisionLogWriter& log_;
  const std::string token_digest_;
  std::ostream& messages_;
  std::mutex mutex_;
  wire::LogRecord record_;
  JobSequence sequence_;
  std::uint64_t unauthenticated_ = 0;
  std::uint64_t refusals_ = 0;
  std::uint64_t unsummarized_ = 0;
  std::chrono::steady_clock::time_point last_summary_{};
};

/// A call whose request gRPC could not parse: no message after deserializing and an INTERNAL
/// status (a call refused for the thread quota also has no message, but RESOURCE_EXHAUSTED).
class MalformedRequests final : public grpc::experimental::Interceptor {
 public:
  MalformedRequests(grpc::experimental::ServerRpcInfo* info, DecideService& service)
      : info_(info), service_(service) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      unparsed_ = methods->GetRecvMessage() == nullptr;
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS) && unparsed_ &&
        methods->GetSendStatus().error_code() == grpc::StatusCode::INTERNAL &&
        info_->server_context() != nullptr) {
      service_.malformed(*info_->server_context());
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* info_;
  DecideService& service_;
  bool unparsed_ = false;
};

class MalformedRequestsFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MalformedRequestsFactory(DecideService& service) : service_(service) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MalformedRequests(info, service_);
  }

 private:
  DecideService& service_;
};

void limit(grpc::ServerBuilder& builder) {
  using L = ServerLimits;
  grpc::ResourceQuota quota("dynamix-serve");
  quota.Resize(L::kMemoryBytes).SetMaxThreads(L::kMaxThreads);
  builder.SetResourceQuota(quota);
  builder.SetSyncServerOption(grpc::ServerBuilder::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::MAX_POLLERS, 2);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, L::kMaxStreamsPerConnection);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, L::kHandshakeTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, L::kMaxConnectionIdleMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, L::kMaxConnectionAgeMs);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, L::kMaxConnectionAgeGraceMs);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             L::kMinPingIntervalMs);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, 8 << 10);
}

}  // namespace

struct ArbitratorServer::Impl {
  DecideService service;
  std::unique_ptr<ConnectionGate> gate;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

ArbitratorServer::ArbitratorServer(const Arbitrator& arbitrator, DecisionRunner& runner,
                                   DecisionLogWriter& log, const ServerOptions& options,
                                   std::ostream& messages)
    : impl_(new Impl{DecideService(arbitrator, runner, log, options, messages), nullptr, nullptr,
                     0}) {
  grpc::ServerBuilder builder;
  const std::string host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const std::string address = host + ":" + std::to_string(options.port);
  // Every connection, TLS too, comes in through the gate, which terminates TLS itself.
  std::optional<GateTls> tls;
  if (!options.tls_certificate.empty()) {
    tls = GateTls{options.tls_certificate, options.tls_key, options.tls_client_ca};
  }
  impl_->gate = std::make_unique<ConnectionGate>(
      options.host, options.port,
      GateLimits{.max_open_streams = ServerLimits::kMaxStreamsPerConnection}, tls);
  impl_->port = impl_->gate->port();
  builder.SetMaxReceiveMessageSize(
      static_cast<int>(ServerLimits::kReceiveSlack * max_report_bytes(arbitrator.workers())));
  limit(builder);
  builder.RegisterService(&impl_->service);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<MalformedRequestsFactory>(impl_->service));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    throw InputError("--listen", 0, "",
                     "an address this machine can listen on and no other server holds",
                     "'" + address + "'");
  }
  if (impl_->gate) impl_->gate->start(*impl_->server);
}

ArbitratorServer::~ArbitratorServer() { shutdown(); }

int ArbitratorServer::port() const { return impl_->port; }

GateCounts ArbitratorServer::gate_counts() const {
  return impl_->gate ? impl_->gate->counts() : GateCounts{};
}

void ArbitratorServer::shutdown() {
  if (impl_->gate) impl_->gate->stop();
  if (!impl_->server) return;
  impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace dynamix
