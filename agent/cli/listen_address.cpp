#include "cli/listen_address.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "common/fd.h"

namespace kagent::cli {

std::optional<std::string> listen_address_problem(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), "0", &hints, &found); rc != 0)
    return host + " is not an address or a host name that resolves (" + ::gai_strerror(rc) + ")";
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(found, &::freeaddrinfo);
  int last_errno = 0;
  for (const addrinfo* ai = found; ai; ai = ai->ai_next) {
    const Fd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd) {
      last_errno = errno;
      continue;
    }
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return std::nullopt;
    last_errno = errno;
  }
  if (last_errno == EADDRNOTAVAIL) return host + " is not an address of this machine (it cannot be bound)";
  return host + " cannot be bound: " + std::strerror(last_errno);
}

}  // namespace kagent::cli
