// SPDX-License-Identifier: Apache-2.0
// --listen: HOST:PORT, checked before anything is attached, and a bind that fails said in one
// line (civetweb only says it could not start).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/errors.h"
#include "common/fd.h"
#include "serve/serve_session.h"

namespace wp {

ListenAddress parse_listen(const std::string& text) {
  auto bad = [&text](const char* why) {
    return Failure(kExitUsage, fmt::format("--listen {}: {} (HOST:PORT, e.g. 127.0.0.1:9441 or "
                                           "[::1]:9441)",
                                           text, why));
  };
  ListenAddress address;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      throw bad("an IPv6 address needs [ADDRESS]:PORT");
    address.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    in6_addr a6{};
    if (::inet_pton(AF_INET6, address.host.c_str(), &a6) != 1) throw bad("not an IPv6 address");
    address.loopback = IN6_IS_ADDR_LOOPBACK(&a6);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) throw bad("no port");
    address.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (address.host == "localhost") address.host = "127.0.0.1";
    in_addr a4{};
    if (::inet_pton(AF_INET, address.host.c_str(), &a4) != 1)
      throw bad("not an IPv4 address (names other than localhost are not resolved)");
    address.loopback = (ntohl(a4.s_addr) >> 24) == 127;
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535)
    throw bad("the port must be 1-65535");
  address.port = static_cast<std::uint16_t>(value);
  return address;
}

// Binds a socket to the address and lets it go: "address already in use" or "cannot assign
// requested address" as the kernel says it, before the hooks are attached. (A port taken in the
// moment between this and the exporter's own bind is still reported, less precisely.)
std::string bind_error(const ListenAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  UniqueFd fd(::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return std::strerror(errno);
  const int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as civetweb does
  int rc;
  if (v6) {
    sockaddr_in6 sa{};
    sa.sin6_family = AF_INET6;
    sa.sin6_port = htons(address.port);
    ::inet_pton(AF_INET6, address.host.c_str(), &sa.sin6_addr);
    rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  } else {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(address.port);
    ::inet_pton(AF_INET, address.host.c_str(), &sa.sin_addr);
    rc = ::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
  }
  if (rc != 0) return std::strerror(errno);
  if (::listen(fd.get(), 1) != 0) return std::strerror(errno);
  return "";
}

}  // namespace wp
