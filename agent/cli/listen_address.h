// Whether a server can listen on a host: `kagent serve --host 8.8.8.8` was reported as "the port
// is in use" (httplib says only that the bind failed). Checked with a bind of our own to port 0
// on each of the host's addresses, whose errno tells "not an address of this machine" from a
// name that does not resolve.
#pragma once

#include <optional>
#include <string>

namespace kagent::cli {

// nullopt when some address of `host` can be bound; else why not, in words ("8.8.8.8 is not an
// address of this machine").
std::optional<std::string> listen_address_problem(const std::string& host);

}  // namespace kagent::cli
