// The gRPC Arbitrator service: one decision at a time, each logged before it is answered.
#include "adapter/server/arbitrator_server.h"

#include <grpcpp/grpcpp.h>

#include "adapter/proto/dynamix.grpc.pb.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

class DecideService final : public wire::Arbitrator::Service {
 public:
  DecideService(const Arbitrator& arbitrator, DecisionLogWriter& log, std::ostream& messages)
      : arbitrator_(arbitrator), log_(log), messages_(messages) {}

  grpc::Status Decide(grpc::ServerContext*, const wire::WindowReport* report,
                      wire::Decision* decision) override {
    const std::lock_guard lock(mutex_);
    try {
      arbitrator_.decide(*report, record_);
    } catch (const ReportError& error) {
      return refuse(*report, grpc::StatusCode::INVALID_ARGUMENT, error.what());
    } catch (const std::exception& error) {
      return refuse(*report, grpc::StatusCode::INTERNAL, error.what());
    }
    try {
      log_.append(record_);
    } catch (const std::exception& error) {
      messages_ << "dynamix serve: " << error.what() << std::endl;
      return {grpc::StatusCode::UNAVAILABLE, error.what()};
    }
    *decision = record_.decision();
    return grpc::Status::OK;
  }

 private:
  grpc::Status refuse(const wire::WindowReport& report, grpc::StatusCode code,
                      const std::string& why) {
    const std::string message = "report refused: " + why;
    messages_ << "dynamix serve: job " << excerpt(report.job_id()) << " window "
              << report.window_index() << ": " << message << std::endl;
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

  const Arbitrator& arbitrator_;
  DecisionLogWriter& log_;
  std::ostream& messages_;
  std::mutex mutex_;
  wire::LogRecord record_;
};

}  // namespace

struct ArbitratorServer::Impl {
  DecideService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};

ArbitratorServer::ArbitratorServer(const Arbitrator& arbitrator, DecisionLogWriter& log,
                                   const std::string& address, std::ostream& messages)
    : impl_(new Impl{DecideService(arbitrator, log, messages), nullptr, 0}) {
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &impl_->port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_report_bytes(arbitrator.workers())));
  builder.RegisterService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server || impl_->port == 0) {
    throw InputError("--listen", 0, "", "an address this machine can listen on (host:port)",
                     "'" + address + "'");
  }
}

ArbitratorServer::~ArbitratorServer() { shutdown(); }

int ArbitratorServer::port() const { return impl_->port; }

void ArbitratorServer::shutdown() {
  if (!impl_->server) return;
  impl_->server->Shutdown();
  impl_->server->Wait();
  impl_->server.reset();
}

}  // namespace dynamix
