#include "src/base/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/base/env.h"
#include "src/base/log.h"
#include "src/base/text.h"

namespace weft {
namespace {

constexpr int kPollSliceMs = 50;

bool aborted(const AbortFlag* abort) {
  return abort != nullptr && abort->load(std::memory_order_relaxed);
}

void setNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

bool matchesSpec(const std::string& name, const std::string& spec) {
  if (spec.empty()) return name.rfind("docker", 0) != 0 && name != "lo";
  bool exclude = spec[0] == '^';
  std::string rest = exclude ? spec.substr(1) : spec;
  bool exact = !rest.empty() && rest[0] == '=';
  if (exact) rest = rest.substr(1);
  bool hit = false;
  for (std::string_view word : split(rest, ',')) {
    if (word.empty()) continue;
    hit = hit || (exact ? name == word : name.rfind(word, 0) == 0);
  }
  return exclude ? !hit : hit;
}

}  // namespace

uint16_t SockAddr::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  if (family() == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  return 0;
}

void SockAddr::setPort(uint16_t port) {
  if (family() == AF_INET) reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  if (family() == AF_INET6) reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
}

bool SockAddr::isLoopback() const {
  if (family() == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr.s_addr) >> 24) == 127;
  }
  if (family() == AF_INET6) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr);
  }
  return false;
}

std::string SockAddr::hostString() const {
  char host[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, host,
              sizeof(host));
    return host;
  }
  if (family() == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, host,
              sizeof(host));
    return "[" + std::string(host) + "]";
  }
  return "<no address>";
}

std::string SockAddr::toString() const {
  if (family() != AF_INET && family() != AF_INET6) return hostString();
  return hostString() + ":" + std::to_string(port());
}

Status SockAddr::parse(const std::string& text, SockAddr* out, bool* numeric) {
  std::string host;
  std::string port = "0";
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos)
      return errorf(weftInvalidArgument, "bad address '%s'", text.c_str());
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':')
        return errorf(weftInvalidArgument, "bad address '%s'", text.c_str());
      port = text.substr(close + 2);
    }
  } else if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else {
    host = text;  // bare IPv6 address or a host without port
  }
  if (host.empty() || port.empty() || port.find_first_not_of("0123456789") != std::string::npos) {
    return errorf(weftInvalidArgument, "bad address '%s': expected host:port", text.c_str());
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0 || result == nullptr) {
    return errorf(weftInvalidArgument, "cannot resolve '%s': %s", text.c_str(), gai_strerror(rc));
  }
  if (numeric != nullptr) {
    in6_addr scratch;
    *numeric = inet_pton(AF_INET, host.c_str(), &scratch) == 1 ||
               inet_pton(AF_INET6, host.c_str(), &scratch) == 1;
  }
  *out = SockAddr();
  memcpy(&out->storage, result->ai_addr, result->ai_addrlen);
  out->length = result->ai_addrlen;
  freeaddrinfo(result);
  return okStatus();
}

Status findInterfaces(const std::string& spec, const std::string& family,
                      std::vector<NetInterface>* out) {
  out->clear();
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return systemError("getifaddrs", errno);
  std::vector<NetInterface> loopback;
  std::string present;  // the names of the interfaces that are up, for the error
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_UP) == 0) continue;
    int fam = i->ifa_addr->sa_family;
    if (fam != AF_INET && fam != AF_INET6) continue;
    if (present.find(std::string(" ") + i->ifa_name + ",") == std::string::npos) {
      present += std::string(" ") + i->ifa_name + ",";
    }
    if (family == "AF_INET" && fam != AF_INET) continue;
    if (family == "AF_INET6" && fam != AF_INET6) continue;
    NetInterface ni;
    ni.name = i->ifa_name;
    ni.address.length = fam == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    memcpy(&ni.address.storage, i->ifa_addr, ni.address.length);
    // Link-local IPv6 addresses need a scope id that peers on other hosts cannot use.
    if (fam == AF_INET6 &&
        IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<sockaddr_in6*>(&ni.address.storage)->sin6_addr)) {
      continue;
    }
    if (matchesSpec(ni.name, spec)) out->push_back(ni);
    if (spec.empty() && ni.name == "lo") loopback.push_back(ni);
  }
  freeifaddrs(list);
  if (out->empty() && spec.empty()) *out = loopback;
  if (!present.empty()) present.pop_back();  // the last comma
  if (out->empty() && spec.empty()) {
    return errorf(weftSystemError, "no network interface of family '%s' is up (up:%s)",
                  family.c_str(), present.empty() ? " none" : present.c_str());
  }
  if (out->empty()) {
    return errorf(weftInvalidArgument,
                  "no network interface matches WEFT_SOCKET_IFNAME='%s'%s%s (up:%s)", spec.c_str(),
                  family.empty() ? "" : " and WEFT_SOCKET_FAMILY=", family.c_str(),
                  present.empty() ? " none" : present.c_str());
  }
  return okStatus();
}

Status defaultInterface(NetInterface* out) {
  std::vector<NetInterface> list;
  WEFT_RETURN_IF_ERROR(findInterfaces(env().socketIfname, env().socketFamily, &list));
  // Prefer IPv4 when both families are allowed, as NCCL does.
  *out = list[0];
  for (const auto& ni : list) {
    if (ni.address.family() == AF_INET) {
      *out = ni;
      break;
    }
  }
  return okStatus();
}

Status localAddressFor(const SockAddr& remote, SockAddr* local) {
  int fd = socket(remote.family(), SOCK_DGRAM, 0);
  if (fd < 0) return systemError("socket", errno);
  Socket guard(fd);
  if (::connect(fd, remote.raw(), remote.length) != 0) return systemError("connect (udp)", errno);
  *local = SockAddr();
  local->length = sizeof(local->storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local->storage), &local->length) != 0) {
    return systemError("getsockname", errno);
  }
  local->setPort(0);
  return okStatus();
}

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Socket::shutdown() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

Status listenSocket(const SockAddr& address, Socket* out, SockAddr* bound) {
  int fd = socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return systemError("socket", errno);
  Socket s(fd);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, address.raw(), address.length) != 0) {
    return systemError(("bind to " + address.toString()).c_str(), errno);
  }
  if (listen(fd, SOMAXCONN) != 0) return systemError("listen", errno);
  setNonBlocking(fd);
  *bound = SockAddr();
  bound->length = sizeof(bound->storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound->storage), &bound->length) != 0) {
    return systemError("getsockname", errno);
  }
  *out = std::move(s);
  return okStatus();
}

Status pollSocket(int fd, short events, Deadline deadline, const AbortFlag* abort) {
  for (;;) {
    if (aborted(abort)) return abortedStatus();
    if (deadline.expired()) return Status(weftTimeout, "timed out waiting on a socket");
    pollfd p{fd, events, 0};
    int rc = poll(&p, 1, deadline.remainingMs(kPollSliceMs));
    if (rc < 0 && errno != EINTR) return systemError("poll", errno);
    if (rc > 0) return okStatus();
  }
}

Status connectSocket(const SockAddr& address, Deadline deadline, const AbortFlag* abort,
                     Socket* out) {
  Backoff backoff;
  for (;;) {
    int fd = socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return systemError("socket", errno);
    Socket s(fd);
    setNonBlocking(fd);
    int rc = ::connect(fd, address.raw(), address.length);
    int err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      WEFT_RETURN_IF_ERROR(pollSocket(fd, POLLOUT, deadline, abort)
                               .withContext("connecting to " + address.toString()));
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    }
    if (err == 0) {
      setNoDelay(fd);
      *out = std::move(s);
      return okStatus();
    }
    bool retry = err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH ||
                 err == ENETUNREACH || err == ECONNRESET;
    if (!retry) return systemError(("connect to " + address.toString()).c_str(), err);
    if (aborted(abort)) return abortedStatus();
    if (deadline.expired()) {
      return errorf(weftTimeout, "timed out connecting to %s (%s)", address.toString().c_str(),
                    strerror(err));
    }
    for (int i = 0; i < 64 && !backoff.sleeping(); ++i)
      backoff.pause();
    backoff.pause();
  }
}

Status acceptNow(const Socket& listener, Socket* out, SockAddr* peer) {
  *out = Socket();
  for (;;) {
    SockAddr from;
    from.length = sizeof(from.storage);
    int fd = accept4(listener.fd(), reinterpret_cast<sockaddr*>(&from.storage), &from.length,
                     SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      *out = Socket(fd);
      if (peer != nullptr) *peer = from;
      return okStatus();
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return okStatus();
    return systemError("accept", errno);
  }
}

Status sendAll(const Socket& s, const void* data, size_t bytes, Deadline deadline,
               const AbortFlag* abort) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(s.fd(), p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      WEFT_RETURN_IF_ERROR(pollSocket(s.fd(), POLLOUT, deadline, abort));
      continue;
    }
    if (errno == EPIPE || errno == ECONNRESET) {
      return Status(weftRemoteError, "connection closed by the peer");
    }
    return systemError("send", errno);
  }
  return okStatus();
}

Status recvAll(const Socket& s, void* data, size_t bytes, Deadline deadline,
               const AbortFlag* abort) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = ::recv(s.fd(), p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) return Status(weftRemoteError, "connection closed by the peer");
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      WEFT_RETURN_IF_ERROR(pollSocket(s.fd(), POLLIN, deadline, abort));
      continue;
    }
    if (errno == ECONNRESET) return Status(weftRemoteError, "connection reset by the peer");
    return systemError("recv", errno);
  }
  return okStatus();
}

void setNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void setBufferSizes(int fd, int bytes) {
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

}  // namespace weft
