// One epoll thread accepts, relays and watches every connection to the arbitrator.
#include "adapter/server/connection_gate.h"

#include <fcntl.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>
#include <unordered_map>
#include <vector>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint8_t kData = 0x0;
constexpr std::uint8_t kHeaders = 0x1;
constexpr std::uint8_t kResetStream = 0x3;
constexpr std::uint8_t kEndStream = 0x1;
constexpr std::size_t kReadChunk = 64 << 10;

/// One relayed connection: the client's socket and gRPC's end of a socket pair.
struct Link {
  int client = -1;
  int inner = -1;
  /// Bytes read from the client, waiting for gRPC; and the other way.
  std::string up;
  std::string down;
  FrameScanner up_frames{true};
  FrameScanner down_frames{false};
  /// The client's streams not yet finished, with the time each was opened.
  std::map<std::uint32_t, Clock::time_point> open;
  bool cut = false;
};

}  // namespace

struct ConnectionGate::Impl {
  GateLimits limits;
  int listener = -1;
  int wake = -1;
  int epoll = -1;
  int port = 0;
  grpc::Server* server = nullptr;
  std::thread thread;
  std::unordered_map<int, std::unique_ptr<Link>> links;  // by client descriptor
  std::unordered_map<int, Link*> by_descriptor;
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> cut{0};

  void run();
  void accept_all();
  void relay(Link& link, int descriptor, std::uint32_t events);
  void scan_up(Link& link, const std::uint8_t* data, std::size_t size);
  void scan_down(Link& link, const std::uint8_t* data, std::size_t size);
  void watch(Link& link);
  void close_link(Link& link);
  void cut_overdue();
};

void ConnectionGate::Impl::scan_up(Link& link, const std::uint8_t* data, std::size_t size) {
  link.up_frames.feed(data, size, [&](const FrameScanner::Frame& frame) {
    if (frame.type == kHeaders && !(frame.flags & kEndStream) &&
        !link.open.contains(frame.stream)) {
      link.open.emplace(frame.stream, Clock::now());
      if (static_cast<int>(link.open.size()) > limits.max_open_streams) link.cut = true;
    } else if ((frame.type == kData && (frame.flags & kEndStream)) || frame.type == kResetStream) {
      link.open.erase(frame.stream);
    }
  });
}

void ConnectionGate::Impl::scan_down(Link& link, const std::uint8_t* data, std::size_t size) {
  link.down_frames.feed(data, size, [&](const FrameScanner::Frame& frame) {
    if (frame.type == kResetStream || (frame.type == kHeaders && (frame.flags & kEndStream))) {
      link.open.erase(frame.stream);
    }
  });
}

void ConnectionGate::Impl::watch(Link& link) {
  const auto events = [&](bool readable, bool writable) {
    epoll_event event{};
    event.events = (readable ? EPOLLIN | EPOLLRDHUP : 0u) | (writable ? EPOLLOUT : 0u);
    return event;
  };
  epoll_event client = events(link.up.size() < limits.buffer_bytes, !link.down.empty());
  client.data.fd = link.client;
  epoll_ctl(epoll, EPOLL_CTL_MOD, link.client, &client);
  epoll_event inner = events(link.down.size() < limits.buffer_bytes, !link.up.empty());
  inner.data.fd = link.inner;
  epoll_ctl(epoll, EPOLL_CTL_MOD, link.inner, &inner);
}

void ConnectionGate::Impl::close_link(Link& link) {
  if (!link.down.empty()) {  // what gRPC already answered, best effort
    [[maybe_unused]] const ssize_t written =
        ::send(link.client, link.down.data(), link.down.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  for (const int descriptor : {link.client, link.inner}) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nullptr);
    by_descriptor.erase(descriptor);
    ::close(descriptor);
  }
  links.erase(link.client);
}

void ConnectionGate::Impl::relay(Link& link, int descriptor, std::uint32_t events) {
  const bool from_client = descriptor == link.client;
  std::string& incoming = from_client ? link.up : link.down;
  std::string& outgoing = from_client ? link.down : link.up;
  bool closed = (events & (EPOLLERR | EPOLLHUP)) != 0;
  if (events & EPOLLOUT) {
    const ssize_t written =
        ::send(descriptor, outgoing.data(), outgoing.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (written > 0) {
      outgoing.erase(0, static_cast<std::size_t>(written));
    } else if (written < 0 && errno != EAGAIN && errno != EINTR) {
      closed = true;
    }
  }
  if ((events & (EPOLLIN | EPOLLRDHUP)) && incoming.size() < limits.buffer_bytes) {
    std::uint8_t buffer[kReadChunk];
    const ssize_t got = ::recv(descriptor, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) {
      const auto size = static_cast<std::size_t>(got);
      from_client ? scan_up(link, buffer, size) : scan_down(link, buffer, size);
      incoming.append(reinterpret_cast<const char*>(buffer), size);
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      closed = true;
    }
  }
  if (link.cut) ++cut;
  if (closed || link.cut) {
    close_link(link);
  } else {
    watch(link);
  }
}

void ConnectionGate::Impl::accept_all() {
  while (true) {
    const int client = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;
    int pair[2];
    if (static_cast<int>(links.size()) >= limits.max_connections ||
        ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
      ++refused;
      ::close(client);
      continue;
    }
    grpc::AddInsecureChannelFromFd(server, pair[1]);  // gRPC owns pair[1] from here
    auto link = std::make_unique<Link>();
    link->client = client;
    link->inner = pair[0];
    for (const int descriptor : {client, pair[0]}) {
      epoll_event event{};
      event.events = EPOLLIN | EPOLLRDHUP;
      event.data.fd = descriptor;
      epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event);
      by_descriptor[descriptor] = link.get();
    }
    links.emplace(client, std::move(link));
  }
}

void ConnectionGate::Impl::cut_overdue() {
  const Clock::time_point now = Clock::now();
  std::vector<Link*> overdue;
  for (auto& [descriptor, link] : links) {
    for (const auto& [stream, opened] : link->open) {
      if (now - opened > limits.stream_deadline) {
        overdue.push_back(link.get());
        break;
      }
    }
  }
  for (Link* link : overdue) {
    ++cut;
    close_link(*link);
  }
}

void ConnectionGate::Impl::run() {
  epoll_event events[64];
  while (true) {
    const int ready = epoll_wait(epoll, events, 64, 200);
    for (int i = 0; i < ready; ++i) {
      const int descriptor = events[i].data.fd;
      if (descriptor == wake) return;
      if (descriptor == listener) {
        accept_all();
        continue;
      }
      const auto found = by_descriptor.find(descriptor);
      if (found != by_descriptor.end()) relay(*found->second, descriptor, events[i].events);
    }
    cut_overdue();
  }
}

ConnectionGate::ConnectionGate(const std::string& host, int port, GateLimits limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
  const std::string address = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) {
    throw InputError("--listen", 0, "", "an address this machine can listen on",
                     "'" + address + "' (unknown host)");
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  impl_->listener = ::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int yes = 1;
  ::setsockopt(impl_->listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (impl_->listener < 0 || ::bind(impl_->listener, found->ai_addr, found->ai_addrlen) != 0 ||
      ::listen(impl_->listener, 128) != 0) {
    const std::string why = std::strerror(errno);
    if (impl_->listener >= 0) ::close(impl_->listener);
    throw InputError("--listen", 0, "",
                     "an address this machine can listen on and no other server holds",
                     "'" + address + "' (" + why + ")");
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(impl_->listener, reinterpret_cast<sockaddr*>(&bound), &length);
  impl_->port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  impl_->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  impl_->epoll = ::epoll_create1(EPOLL_CLOEXEC);
  for (const int descriptor : {impl_->listener, impl_->wake}) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = descriptor;
    epoll_ctl(impl_->epoll, EPOLL_CTL_ADD, descriptor, &event);
  }
}

ConnectionGate::~ConnectionGate() {
  stop();
  for (const int descriptor : {impl_->listener, impl_->wake, impl_->epoll}) {
    if (descriptor >= 0) ::close(descriptor);
  }
}

int ConnectionGate::port() const { return impl_->port; }

void ConnectionGate::start(grpc::Server& server) {
  impl_->server = &server;
  impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

void ConnectionGate::stop() {
  if (!impl_->thread.joinable()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t written = ::write(impl_->wake, &one, sizeof one);
  impl_->thread.join();
  while (!impl_->links.empty()) impl_->close_link(*impl_->links.begin()->second);
}

GateCounts ConnectionGate::counts() const {
  return {.connections_refused = impl_->refused, .connections_cut = impl_->cut};
}

}  // namespace dynamix
