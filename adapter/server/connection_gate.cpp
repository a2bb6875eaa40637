// One epoll thread accepts, relays and watches every connection to the arbitrator, terminating
// TLS itself so that encrypted connections pass the same bounds as plain ones.
#include "adapter/server/connection_gate.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/server.h>
#include <grpcpp/server_posix.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

constexpr std::size_t kReadChunk = 64 << 10;

/// One relayed connection: the client's socket (under TLS, its session) and gRPC's end of a
/// socket pair.
struct Link {
  Link(const GateLimits& limits, GateClock::time_point accepted) : ledger(limits, accepted) {}
  ~Link() { SSL_free(tls); }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  int client = -1;
  int inner = -1;
  std::string peer;
  SSL* tls = nullptr;
  bool handshaken = false;
  /// The TLS session wants the client socket writable before it can go on reading.
  bool tls_wants_write = false;
  /// Plaintext read from the client, waiting for gRPC; and the other way.
  std::string up;
  std::string down;
  ConnectionLedger ledger;
  /// The client passed one of the ledger's bounds: the gate cuts the connection.
  bool bound_passed = false;
};

/// The PEM in `text` as OpenSSL reads it from memory; nullptr if it is not one.
template <typename T, typename Read>
T* read_pem(const std::string& text, Read read) {
  BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
  T* value = read(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return value;
}

int select_h2(SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
              unsigned int in_length, void*) {
  static const unsigned char kH2[] = {2, 'h', '2'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_length, kH2, sizeof kH2, in, in_length) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;  // gRPC speaks HTTP/2 only
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

/// A TLS server context for `tls`; InputError naming --tls-cert when OpenSSL refuses it.
SSL_CTX* tls_context(const GateTls& tls) {
  SSL_CTX* context = SSL_CTX_new(TLS_server_method());
  const auto refuse = [&](const std::string& what) {
    SSL_CTX_free(context);
    return InputError("--tls-cert", 0, "", "a PEM certificate chain and its private key",
                      what + " (" + ERR_reason_error_string(ERR_get_error()) + ")");
  };
  SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
  SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  BIO* chain = BIO_new_mem_buf(tls.certificate.data(), static_cast<int>(tls.certificate.size()));
  X509* leaf = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
  const bool leaf_used = leaf && SSL_CTX_use_certificate(context, leaf) == 1;
  X509_free(leaf);
  while (leaf_used) {  // the rest of the chain
    X509* next = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
    if (!next || SSL_CTX_add_extra_chain_cert(context, next) != 1) {
      X509_free(next);
      break;
    }
  }
  BIO_free(chain);
  ERR_clear_error();
  if (!leaf_used) throw refuse("a certificate OpenSSL cannot use");
  EVP_PKEY* key = read_pem<EVP_PKEY>(tls.key, PEM_read_bio_PrivateKey);
  const bool key_used = key && SSL_CTX_use_PrivateKey(context, key) == 1;
  EVP_PKEY_free(key);
  if (!key_used || SSL_CTX_check_private_key(context) != 1) {
    throw refuse("a private key that is not the certificate's");
  }
  if (!tls.client_ca.empty()) {
    X509_STORE* store = SSL_CTX_get_cert_store(context);
    BIO* bundle = BIO_new_mem_buf(tls.client_ca.data(), static_cast<int>(tls.client_ca.size()));
    int added = 0;
    while (X509* ca = PEM_read_bio_X509(bundle, nullptr, nullptr, nullptr)) {
      added += X509_STORE_add_cert(store, ca);
      X509_free(ca);
    }
    BIO_free(bundle);
    ERR_clear_error();
    if (added == 0) throw refuse("a client CA bundle without a certificate");
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  SSL_CTX_set_alpn_select_cb(context, select_h2, nullptr);
  return context;
}

std::string peer_address(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = "?";
  if (address.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, text, sizeof text);
  } else if (address.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, text,
              sizeof text);
  }
  return text;
}

}  // namespace

struct ConnectionGate::Impl {
  GateLimits limits;
  SSL_CTX* tls = nullptr;
  /// The address's listening socket, and its twin on the other loopback.
  std::vector<int> listeners;
  int wake = -1;
  int epoll = -1;
  int port = 0;
  grpc::Server* server = nullptr;
  std::thread thread;
  std::unordered_map<int, std::unique_ptr<Link>> links;  // by client descriptor
  std::unordered_map<int, Link*> by_descriptor;
  std::unordered_map<std::string, int> per_peer;
  std::size_t pending_bytes = 0;  // the ledgers' together
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> cut{0};
  std::atomic<std::uint64_t> evicted{0};

  void run();
  void accept_all(int listener);
  bool make_room(const std::string& peer);
  void relay(Link& link, int descriptor, std::uint32_t events);
  bool read_client(Link& link);
  bool write_client(Link& link);
  bool client_bytes(Link& link, const std::uint8_t* data, std::size_t size);
  void watch(Link& link);
  void close_link(Link& link);
  void cut_overdue();
};

void ConnectionGate::Impl::watch(Link& link) {
  const auto events = [&](bool readable, bool writable) {
    epoll_event event{};
    event.events = (readable ? EPOLLIN | EPOLLRDHUP : 0u) | (writable ? EPOLLOUT : 0u);
    return event;
  };
  epoll_event client =
      events(link.up.size() < limits.buffer_bytes, !link.down.empty() || link.tls_wants_write);
  client.data.fd = link.client;
  epoll_ctl(epoll, EPOLL_CTL_MOD, link.client, &client);
  epoll_event inner = events(link.down.size() < limits.buffer_bytes, !link.up.empty());
  inner.data.fd = link.inner;
  epoll_ctl(epoll, EPOLL_CTL_MOD, link.inner, &inner);
}

void ConnectionGate::Impl::close_link(Link& link) {
  if (!link.down.empty() && !link.tls) {  // what gRPC already answered, best effort
    [[maybe_unused]] const ssize_t written =
        ::send(link.client, link.down.data(), link.down.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  for (const int descriptor : {link.client, link.inner}) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor, nullptr);
    by_descriptor.erase(descriptor);
    ::close(descriptor);
  }
  pending_bytes -= link.ledger.pending_bytes();
  if (--per_peer[link.peer] == 0) per_peer.erase(link.peer);
  links.erase(link.client);
}

/// Plaintext from the client into the ledger and the buffer; false to cut the connection.
bool ConnectionGate::Impl::client_bytes(Link& link, const std::uint8_t* data, std::size_t size) {
  const std::size_t before = link.ledger.pending_bytes();
  const bool passed = link.ledger.client_bytes(data, size, GateClock::now()).empty();
  pending_bytes += link.ledger.pending_bytes() - before;
  link.up.append(reinterpret_cast<const char*>(data), size);
  link.bound_passed = !passed || pending_bytes > limits.max_pending_bytes;
  return !link.bound_passed;
}

/// Reads what the client sent (through TLS when on); false when the connection must close.
bool ConnectionGate::Impl::read_client(Link& link) {
  std::uint8_t buffer[kReadChunk];
  if (!link.tls) {
    const ssize_t got = ::recv(link.client, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) return client_bytes(link, buffer, static_cast<std::size_t>(got));
    return got < 0 && (errno == EAGAIN || errno == EINTR);
  }
  link.tls_wants_write = false;
  if (!link.handshaken) {
    const int done = SSL_accept(link.tls);
    if (done != 1) {
      const int error = SSL_get_error(link.tls, done);
      link.tls_wants_write = error == SSL_ERROR_WANT_WRITE;
      ERR_clear_error();
      return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;
    }
    link.handshaken = true;
  }
  // Records decrypted ahead stay in the session, which epoll cannot see: read until it wants
  // the socket, or the buffer is full (write_inner comes back here as it drains).
  while (link.up.size() < limits.buffer_bytes) {
    const int got = SSL_read(link.tls, buffer, sizeof buffer);
    if (got > 0) {
      if (!client_bytes(link, buffer, static_cast<std::size_t>(got))) return false;
      continue;
    }
    const int error = SSL_get_error(link.tls, got);
    link.tls_wants_write = error == SSL_ERROR_WANT_WRITE;
    ERR_clear_error();
    return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;
  }
  return true;
}

/// Sends gRPC's answers to the client; false when the connection must close.
bool ConnectionGate::Impl::write_client(Link& link) {
  if (link.down.empty() || (link.tls && !link.handshaken)) return true;
  if (!link.tls) {
    const ssize_t written =
        ::send(link.client, link.down.data(), link.down.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (written > 0) link.down.erase(0, static_cast<std::size_t>(written));
    return written >= 0 || errno == EAGAIN || errno == EINTR;
  }
  const int written = SSL_write(link.tls, link.down.data(), static_cast<int>(link.down.size()));
  if (written > 0) {
    link.down.erase(0, static_cast<std::size_t>(written));
    return true;
  }
  const int error = SSL_get_error(link.tls, written);
  ERR_clear_error();
  return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE;
}

void ConnectionGate::Impl::relay(Link& link, int descriptor, std::uint32_t events) {
  bool open = (events & (EPOLLERR | EPOLLHUP)) == 0;
  if (descriptor == link.client) {
    if (open && (events & EPOLLOUT)) {
      // A TLS session that wanted to write to go on reading (the handshake) reads again.
      const bool reread = link.tls_wants_write;
      open = write_client(link) && (!reread || read_client(link));
    }
    if (open && (events & (EPOLLIN | EPOLLRDHUP)) && link.up.size() < limits.buffer_bytes) {
      open = read_client(link);
    }
  } else {
    if (open && (events & EPOLLOUT)) {
      const ssize_t written =
          ::send(link.inner, link.up.data(), link.up.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (written > 0) link.up.erase(0, static_cast<std::size_t>(written));
      open = written >= 0 || errno == EAGAIN || errno == EINTR;
      if (open && link.tls && link.handshaken) open = read_client(link);  // records held back
    }
    if (open && (events & (EPOLLIN | EPOLLRDHUP)) && link.down.size() < limits.buffer_bytes) {
      std::uint8_t buffer[kReadChunk];
      const ssize_t got = ::recv(link.inner, buffer, sizeof buffer, MSG_DONTWAIT);
      if (got > 0) {
        const std::size_t before = link.ledger.pending_bytes();  // answers end streams
        link.ledger.server_bytes(buffer, static_cast<std::size_t>(got), GateClock::now());
        pending_bytes -= before - link.ledger.pending_bytes();
        link.down.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(got));
        open = write_client(link);
      } else {
        open = got < 0 && (errno == EAGAIN || errno == EINTR);
      }
    }
  }
  if (open) {
    watch(link);
  } else {
    if (link.bound_passed) ++cut;
    close_link(link);
  }
}

/// Room for one more connection from `peer`: true when there is, if need be after closing an
/// idle connection (within the peer's own when it is at its cap): one that never opened a stream
/// before one that did, the longest idle first.
bool ConnectionGate::Impl::make_room(const std::string& peer) {
  const auto found = per_peer.find(peer);
  const bool peer_full =
      found != per_peer.end() && found->second >= limits.max_connections_per_peer;
  if (!peer_full && static_cast<int>(links.size()) < limits.max_connections) return true;
  Link* oldest = nullptr;
  for (const auto& [descriptor, link] : links) {
    const auto rank = [](const Link& l) {
      return std::pair(l.ledger.ever_opened(), l.ledger.last_active());
    };
    if (link->ledger.idle() && (!peer_full || link->peer == peer) &&
        (!oldest || rank(*link) < rank(*oldest))) {
      oldest = link.get();
    }
  }
  if (!oldest) return false;
  ++evicted;
  close_link(*oldest);
  return true;
}

void ConnectionGate::Impl::accept_all(int listener) {
  while (true) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int client = ::accept4(listener, reinterpret_cast<sockaddr*>(&address), &length,
                                 SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client < 0) return;
    const std::string peer = peer_address(address);
    int pair[2];
    if (!make_room(peer) ||
        ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
      ++refused;
      ::close(client);
      continue;
    }
    auto link = std::make_unique<Link>(limits, GateClock::now());
    if (tls) {
      link->tls = SSL_new(tls);
      if (!link->tls || SSL_set_fd(link->tls, client) != 1) {
        ++refused;
        ::close(client);
        ::close(pair[0]);
        ::close(pair[1]);
        continue;
      }
    }
    grpc::AddInsecureChannelFromFd(server, pair[1]);  // gRPC owns pair[1] from here
    link->client = client;
    link->inner = pair[0];
    link->peer = peer;
    ++per_peer[peer];
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
  const GateClock::time_point now = GateClock::now();
  std::vector<Link*> overdue;
  for (auto& [descriptor, link] : links) {
    if (!link->ledger.overdue(now).empty()) overdue.push_back(link.get());
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
      if (std::find(listeners.begin(), listeners.end(), descriptor) != listeners.end()) {
        accept_all(descriptor);
        continue;
      }
      const auto found = by_descriptor.find(descriptor);
      if (found != by_descriptor.end()) relay(*found->second, descriptor, events[i].events);
    }
    cut_overdue();
  }
}

namespace {

/// A listening socket bound to `address`, or -1 with errno set.
int listen_on(const sockaddr* address, socklen_t length) {
  const int listener = ::socket(address->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listener < 0) return -1;
  const int yes = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  if (address->sa_family == AF_INET6) {
    ::setsockopt(listener, IPPROTO_IPV6, IPV6_V6ONLY, &yes, sizeof yes);
  }
  if (::bind(listener, address, length) != 0 || ::listen(listener, 128) != 0) {
    const int error = errno;
    ::close(listener);
    errno = error;
    return -1;
  }
  return listener;
}

/// The other loopback's address at `port` (::1 for 127.0.0.1, 127.0.0.1 for ::1), if `bound`
/// is a loopback address.
std::optional<sockaddr_storage> twin_loopback(const sockaddr_storage& bound, int port) {
  sockaddr_storage twin{};
  if (bound.ss_family == AF_INET &&
      (ntohl(reinterpret_cast<const sockaddr_in&>(bound).sin_addr.s_addr) >> 24) == 127) {
    auto& six = reinterpret_cast<sockaddr_in6&>(twin);
    six.sin6_family = AF_INET6;
    six.sin6_addr = in6addr_loopback;
    six.sin6_port = htons(static_cast<std::uint16_t>(port));
    return twin;
  }
  if (bound.ss_family == AF_INET6 &&
      IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(bound).sin6_addr)) {
    auto& four = reinterpret_cast<sockaddr_in&>(twin);
    four.sin_family = AF_INET;
    four.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    four.sin_port = htons(static_cast<std::uint16_t>(port));
    return twin;
  }
  return std::nullopt;
}

int port_of(int listener) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length);
  return ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

/// Listening sockets for host:port: the address's own and, for a loopback address, its twin on
/// the other loopback at the same port (one serve per port, whichever loopback a client names;
/// a free port picked for one may be taken on the other, so a few are tried). InputError
/// naming --listen when it cannot.
std::vector<int> listeners_for(const std::string& host, int port) {
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
  const auto refuse = [](const std::string& where) {
    return InputError("--listen", 0, "",
                      "an address this machine can listen on and no other server holds",
                      "'" + where + "' (" + std::strerror(errno) + ")");
  };
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int first = listen_on(found->ai_addr, found->ai_addrlen);
    if (first < 0) throw refuse(address);
    sockaddr_storage bound{};
    std::memcpy(&bound, found->ai_addr, found->ai_addrlen);
    const int chosen = port_of(first);
    const std::optional<sockaddr_storage> twin = twin_loopback(bound, chosen);
    if (!twin) return {first};
    const socklen_t length =
        twin->ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
    const int second = listen_on(reinterpret_cast<const sockaddr*>(&*twin), length);
    if (second >= 0) return {first, second};
    if (errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT) return {first};  // no such loopback
    const InputError taken =
        refuse((twin->ss_family == AF_INET6 ? "[::1]:" : "127.0.0.1:") + std::to_string(chosen));
    ::close(first);
    if (port != 0) throw taken;
  }
  throw refuse(address);
}

}  // namespace

ConnectionGate::ConnectionGate(const std::string& host, int port, GateLimits limits,
                               const std::optional<GateTls>& tls)
    : impl_(std::make_unique<Impl>()) {
  impl_->limits = limits;
  impl_->listeners = listeners_for(host, port);
  if (tls) {
    try {
      impl_->tls = tls_context(*tls);
    } catch (...) {
      for (const int listener : impl_->listeners) ::close(listener);
      throw;
    }
  }
  impl_->port = port_of(impl_->listeners.front());
  impl_->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  impl_->epoll = ::epoll_create1(EPOLL_CLOEXEC);
  std::vector<int> watched = impl_->listeners;
  watched.push_back(impl_->wake);
  for (const int descriptor : watched) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = descriptor;
    epoll_ctl(impl_->epoll, EPOLL_CTL_ADD, descriptor, &event);
  }
}

ConnectionGate::~ConnectionGate() {
  stop();
  for (const int listener : impl_->listeners) ::close(listener);
  for (const int descriptor : {impl_->wake, impl_->epoll}) {
    if (descriptor >= 0) ::close(descriptor);
  }
  SSL_CTX_free(impl_->tls);
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
  return {.connections_refused = impl_->refused,
          .connections_cut = impl_->cut,
          .connections_evicted = impl_->evicted};
}

}  // namespace dynamix
