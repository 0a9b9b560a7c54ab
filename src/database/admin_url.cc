#include "database/admin_url.h"

#include <string_view>

#include "base/percent.h"
#include "base/redaction.h"

namespace adapt::database {
namespace {

constexpr const char* kForm = " (postgres://USER:PASSWORD@HOST:PORT/DATABASE)";

Status Bad(const std::string& what) {
  return InvalidArgument("databaseAdminUrl", "the database admin URL " + what + kForm);
}

// A libpq connection-string value: single-quoted, with \ and ' escaped.
std::string Quoted(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

bool HostNameCharacters(std::string_view host) {
  if (host.empty() || host.size() > 253) return false;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

bool Ipv6Characters(std::string_view host) {
  if (host.empty() || host.size() > 45) return false;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || (c >= '0' && c <= '9') ||
              c == ':' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string AdminUrl::Redacted() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return "postgres://" + PercentEncode(user) + (password.empty() ? "" : ":***") + "@" + h + ":" +
         std::to_string(port) + "/" + PercentEncode(database);
}

std::string AdminUrl::ConnectionString(const std::string& dbname, bool with_password,
                                       int connect_timeout) const {
  std::string s = "host=" + Quoted(host) + " port=" + std::to_string(port) +
                  " user=" + Quoted(user) + " dbname=" + Quoted(dbname) +
                  " connect_timeout=" + std::to_string(connect_timeout) +
                  " application_name=adaptd";
  if (!sslmode.empty()) s += " sslmode=" + sslmode;
  if (with_password && !password.empty()) s += " password=" + Quoted(password);
  return s;
}

std::string AdminUrl::Scrub(std::string text) const {
  if (password.empty()) return text;
  return Redact(text, {password, PercentEncode(password)});
}

Result<AdminUrl> ParseAdminUrl(const std::string& url) {
  std::string_view rest = url;
  bool scheme = false;
  for (std::string_view prefix : {"postgres://", "postgresql://"}) {
    if (rest.substr(0, prefix.size()) == prefix) {
      rest.remove_prefix(prefix.size());
      scheme = true;
      break;
    }
  }
  if (!scheme) return Bad("must start with postgres:// or postgresql://");
  // The user part ends at the last '@', so a password with an unescaped '@' still parses.
  size_t at = rest.rfind('@');
  if (at == std::string_view::npos) return Bad("must name a user and its password");
  std::string_view userinfo = rest.substr(0, at);
  rest.remove_prefix(at + 1);
  AdminUrl u;
  size_t colon = userinfo.find(':');
  auto user = PercentDecode(userinfo.substr(0, colon), PlusSign::kLiteral);
  if (!user || user->empty()) return Bad("must name a user");
  u.user = *user;
  if (colon != std::string_view::npos) {
    auto password = PercentDecode(userinfo.substr(colon + 1), PlusSign::kLiteral);
    if (!password) return Bad("has a broken %-escape in its password");
    u.password = *password;
  }
  size_t query_at = rest.find('?');
  std::string_view query =
      query_at == std::string_view::npos ? std::string_view() : rest.substr(query_at + 1);
  rest = rest.substr(0, query_at);
  size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  std::string_view port;
  bool has_port = false;
  if (!hostport.empty() && hostport.front() == '[') {
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return Bad("has an IPv6 host without its closing ]");
    u.host = std::string(hostport.substr(1, close - 1));
    if (!Ipv6Characters(u.host)) return Bad("has an invalid IPv6 host");
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty() && after.front() != ':') return Bad("has text after its IPv6 host");
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
  } else {
    size_t port_at = hostport.find(':');
    u.host = std::string(hostport.substr(0, port_at));
    has_port = port_at != std::string_view::npos;
    if (has_port) port = hostport.substr(port_at + 1);
    if (u.host.empty()) return Bad("must name a host");
    if (!HostNameCharacters(u.host))
      return Bad("has a host that is neither a name nor an address (one host only)");
  }
  if (has_port) {
    unsigned long value = 0;
    bool digits = !port.empty() && port.size() <= 5;
    for (char c : port) digits = digits && c >= '0' && c <= '9';
    if (digits) value = std::stoul(std::string(port));
    if (!digits || value < 1 || value > 65535)
      return Bad("must have a port from 1 to 65535 after the host");
    u.port = static_cast<uint16_t>(value);
  }
  if (!path.empty()) {
    auto database = PercentDecode(path, PlusSign::kLiteral);
    if (!database || database->empty() || database->find('/') != std::string::npos ||
        database->size() > 63)
      return Bad("must name one database after the host (at most 63 bytes)");
    u.database = *database;
  }
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    if (key != "sslmode") return Bad("may only have the query parameter sslmode");
    bool known = false;
    for (std::string_view mode :
         {"disable", "allow", "prefer", "require", "verify-ca", "verify-full"})
      known = known || value == mode;
    if (!known)
      return Bad(
          "has an sslmode that is not one of disable, allow, prefer, require, verify-ca, "
          "verify-full");
    u.sslmode = std::string(value);
  }
  return u;
}

}  // namespace adapt::database
