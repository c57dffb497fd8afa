#include "src/bootstrap/wire.h"

#include <cstring>

namespace weft {

WireAddress WireAddress::from(const SockAddr& address) {
  WireAddress w;
  w.family = static_cast<uint16_t>(address.family());
  w.port = address.port();
  if (address.family() == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address.storage);
    memcpy(w.bytes, &in->sin_addr, 4);
  } else if (address.family() == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address.storage);
    memcpy(w.bytes, &in6->sin6_addr, 16);
    w.scope = in6->sin6_scope_id;
  }
  return w;
}

SockAddr WireAddress::toSockAddr() const {
  SockAddr a;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&a.storage);
    in->sin_family = AF_INET;
    memcpy(&in->sin_addr, bytes, 4);
    a.length = sizeof(sockaddr_in);
  } else if (family == AF_INET6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&a.storage);
    in6->sin6_family = AF_INET6;
    memcpy(&in6->sin6_addr, bytes, 16);
    in6->sin6_scope_id = scope;
    a.length = sizeof(sockaddr_in6);
  }
  a.setPort(port);
  return a;
}

}  // namespace weft
