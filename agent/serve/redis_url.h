// The URL of `kagent serve --queue redis://HOST:PORT[/DB]`: the Redis every node of a cluster
// shares (docs/serve.md, "Several machines"). Header-only and without hiredis, so a malformed URL
// is the same usage error (exit 2) on a kagent built without hiredis.
#pragma once

#include <cctype>
#include <charconv>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace kagent::serve {

struct RedisUrl {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string text() const { return db ? fmt::format("redis://{}:{}/{}", host, port, db) : fmt::format("redis://{}:{}", host, port); }
};

// redis://HOST[:PORT][/DB] (HOST a name, an IPv4 address or [IPv6]); nullopt, with `why` set,
// for anything else (a password in the URL too: Redis' own ACLs are not kagent's to hold).
inline std::optional<RedisUrl> parse_redis_url(const std::string& text, std::string* why = nullptr) {
  auto fail = [&](const std::string& reason) -> std::optional<RedisUrl> {
    if (why) *why = reason;
    return std::nullopt;
  };
  const std::string scheme = "redis://";
  if (text.rfind(scheme, 0) != 0) return fail("it does not start with redis://");
  std::string rest = text.substr(scheme.size());
  if (rest.find('@') != std::string::npos) return fail("a user or password in the URL is not supported");
  RedisUrl url;
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    const std::string db = rest.substr(slash + 1);
    rest.resize(slash);
    if (!db.empty()) {
      const auto [end, ec] = std::from_chars(db.data(), db.data() + db.size(), url.db);
      if (ec != std::errc() || end != db.data() + db.size() || url.db < 0 || url.db > 15)
        return fail("the database after '/' is not a number from 0 to 15");
    }
  }
  std::string port;
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos) return fail("an IPv6 address lacks its ']'");
    url.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size()) {
      if (rest[close + 1] != ':') return fail("something other than :PORT follows the address");
      port = rest.substr(close + 2);
      if (port.empty()) return fail("no port after ':'");
    }
  } else {
    const auto colon = rest.find(':');
    url.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      port = rest.substr(colon + 1);
      if (port.empty()) return fail("no port after ':'");
    }
    for (char c : url.host)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_'))
        return fail(fmt::format("'{}' is not a host name", url.host));
  }
  if (url.host.empty()) return fail("no host");
  if (!port.empty()) {
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), url.port);
    if (ec != std::errc() || end != port.data() + port.size() || url.port < 1 || url.port > 65535)
      return fail(fmt::format("the port '{}' is not a number from 1 to 65535", port));
  }
  return url;
}

}  // namespace kagent::serve
