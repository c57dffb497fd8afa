// Socket helpers shared by the bootstrap and the tcp transport: addresses, interface selection
// as NCCL_SOCKET_IFNAME does it, and connect/accept/send/recv that honour a deadline and an
// abort flag. Every socket here is non-blocking.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <string>
#include <vector>

#include "src/base/status.h"
#include "src/base/wait.h"

namespace weft {

struct SockAddr {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  uint16_t port() const;
  void setPort(uint16_t port);
  bool isLoopback() const;
  const sockaddr* raw() const { return reinterpret_cast<const sockaddr*>(&storage); }
  // "10.0.0.1:5000" or "[fe80::1]:5000".
  std::string toString() const;
  // The address alone: "10.0.0.1" or "[fe80::1]".
  std::string hostString() const;
  // "host:port", "[v6]:port" or "v6addr" forms; host names are resolved.
  // *numeric (when given) says whether the host was written as an address, which means the same
  // on every host, rather than a name, which each host resolves for itself.
  static Status parse(const std::string& text, SockAddr* out, bool* numeric = nullptr);
};

struct NetInterface {
  std::string name;
  SockAddr address;
};

// Interfaces matching spec: "" (any but loopback and docker*, loopback if nothing else),
// "eth,ib" (name prefixes), "^docker" (all but these), "=eth0" (exact names).
// family: "AF_INET", "AF_INET6" or "" for both.
Status findInterfaces(const std::string& spec, const std::string& family,
                      std::vector<NetInterface>* out);
// The first interface chosen by WEFT_SOCKET_IFNAME and WEFT_SOCKET_FAMILY.
Status defaultInterface(NetInterface* out);
// The local address the kernel would use to reach remote.
Status localAddressFor(const SockAddr& remote, SockAddr* local);

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() { close(); }
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close();
  // Wakes anything blocked on this socket, here and at the peer, without closing the fd.
  void shutdown();

 private:
  int fd_ = -1;
};

using AbortFlag = std::atomic<bool>;

Status listenSocket(const SockAddr& address, Socket* out, SockAddr* bound);
// Retries while the listener is not up yet (ECONNREFUSED) until the deadline.
Status connectSocket(const SockAddr& address, Deadline deadline, const AbortFlag* abort,
                     Socket* out);
// Takes one waiting connection without blocking (the socket non-blocking and close-on-exec):
// *out stays invalid when none waits. Connections that died while queued are skipped.
Status acceptNow(const Socket& listener, Socket* out, SockAddr* peer);
Status sendAll(const Socket& s, const void* data, size_t bytes, Deadline deadline,
               const AbortFlag* abort);
// A peer that closes before all bytes arrived gives weftRemoteError.
Status recvAll(const Socket& s, void* data, size_t bytes, Deadline deadline,
               const AbortFlag* abort);
// Waits until fd is ready for events (POLLIN/POLLOUT), in slices so aborts are seen.
Status pollSocket(int fd, short events, Deadline deadline, const AbortFlag* abort);

void setNoDelay(int fd);
void setBufferSizes(int fd, int bytes);

}  // namespace weft
