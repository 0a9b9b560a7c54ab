#include "core/sandbox_request.h"

#include <cctype>
#include <set>

#include "base/text.h"
#include "core/gpu_types.h"
#include "core/sandbox_limits.h"
#include "core/secret_name.h"
#include "net/address.h"
#include "storage/volume_request.h"

namespace adapt::core {
namespace {

constexpr size_t kMaxNetworkRules = 64;  // seed 001: "Use up to 64 rules"

Result<int64_t> IntegerIn(const std::optional<int64_t>& v, const std::string& field, int64_t min,
                          int64_t max, int64_t fallback) {
  if (!v) return fallback;
  if (*v < min || *v > max)
    return InvalidArgument(
        field, field + " must be between " + std::to_string(min) + " and " + std::to_string(max));
  return *v;
}

Status CheckStrings(const std::vector<std::string>& v, const std::string& field) {
  size_t bytes = 0;
  for (const auto& s : v) {
    if (HasNul(s)) return InvalidArgument(field, field + " must not contain NUL bytes");
    bytes += s.size() + 1;
  }
  if (bytes > limits::kMaxArgvBytes)
    return InvalidArgument(field,
                           field + " exceeds " + std::to_string(limits::kMaxArgvBytes) + " bytes");
  return Status::Ok();
}

Status CheckLabels(const std::map<std::string, std::string>& labels, const FieldNames& names) {
  if (labels.size() > limits::kMaxLabels)
    return InvalidArgument(names("labels"),
                           "at most " + std::to_string(limits::kMaxLabels) + " labels are allowed");
  for (const auto& [key, value] : labels) {
    std::string field = names("labels." + key);
    if (key.empty() || key.size() > limits::kMaxLabelKeyBytes)
      return InvalidArgument(names("labels"), "label keys must be 1 to 63 bytes");
    if (HasNul(key)) return InvalidArgument(names("labels"), "label keys must not contain NUL");
    if (key.starts_with(kPlatformLabelPrefix))
      return InvalidArgument(field, "label keys beginning with 'platform.' are reserved");
    if (value.size() > limits::kMaxLabelValueBytes)
      return InvalidArgument(field, "label values must be at most 256 bytes");
    if (HasNul(value)) return InvalidArgument(field, "label values must not contain NUL");
  }
  return Status::Ok();
}

Status CheckEnv(const std::map<std::string, std::string>& env, const FieldNames& names) {
  for (const auto& [key, value] : env) {
    bool valid = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
    for (char c : key) {
      valid = valid && (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9'));
    }
    if (!valid)
      return InvalidArgument(names("env." + key),
                             "environment variable names must match [A-Za-z_][A-Za-z0-9_]*");
    if (HasNul(value))
      return InvalidArgument(names("env." + key), "environment values must not contain NUL bytes");
  }
  // The environment is every command's and the startup's (seed 001: it "must fit the command
  // limit of 32 KiB"): refused here, before it is stored with the sandbox or a job, whatever
  // the startup mode; the merge with the image's and secrets' is checked again at launch.
  size_t bytes = 0;
  for (const auto& [key, value] : env) bytes += key.size() + value.size() + 2;
  if (bytes > limits::kMaxStartupEnvBytes)
    return InvalidArgument(names("env"), "env holds " + std::to_string(bytes) +
                                             " bytes; the environment must fit the 32 KiB "
                                             "command limit");
  return Status::Ok();
}

// A literal public IPv4/IPv6 address: no CIDR, no hostname, nothing egress may never reach.
Result<std::string> PublicAddress(const std::string& text, const std::string& field) {
  auto ip = net::ParseIp(text);
  if (!ip)
    return InvalidArgument(field, field +
                                      " must be one IPv4 or IPv6 address (no CIDR, no "
                                      "hostname): '" +
                                      text.substr(0, 64) + "'");
  if (net::IsBlockedDestination(*ip))
    return InvalidArgument(field, field + " " + ip->text +
                                      " is a private, local or reserved address; only public "
                                      "addresses can be allowed");
  return ip->text;
}

Result<int> Port(int64_t v, const std::string& field) {
  if (v < 1 || v > 65535)
    return InvalidArgument(field, field + " must be an integer from 1 to 65535");
  return static_cast<int>(v);
}

Result<std::vector<store::AllowRuleConfig>> CheckAllow(const std::vector<AllowRuleRequest>& list) {
  if (list.size() > kMaxNetworkRules)
    return InvalidArgument("network.allow", "network.allow has " + std::to_string(list.size()) +
                                                " rules; at most 64 are allowed");
  std::vector<store::AllowRuleConfig> out;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = "network.allow[" + std::to_string(i) + "]";
    const AllowRuleRequest& r = list[i];
    if (r.protocol != "tcp" && r.protocol != "udp")
      return InvalidArgument(f + ".protocol", f + ".protocol must be \"tcp\" or \"udp\"");
    ASSIGN_OR_RETURN(std::string address, PublicAddress(r.address, f + ".address"));
    ASSIGN_OR_RETURN(int port, Port(r.port, f + ".port"));
    out.push_back({r.protocol, address, port});
  }
  return out;
}

// Exact ASCII names (punycode for the rest): labels of letters, digits and inner hyphens
// (RFC 1123), joined by dots; no wildcards.
bool IsExactHostname(const std::string& h) {
  if (h.empty() || h.size() > 253 || h.front() == '.' || h.back() == '.') return false;
  size_t label = 0;
  char previous = '.';
  for (char c : h) {
    if (c == '.') {
      if (label == 0 || previous == '-') return false;
      label = 0;
      previous = c;
      continue;
    }
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              (c == '-' && label > 0);
    if (!ok || ++label > 63) return false;
    previous = c;
  }
  return previous != '-' && h.find('.') != std::string::npos && !net::ParseIp(h);
}

Result<std::vector<store::HostnameRuleConfig>> CheckHostnames(
    const std::vector<HostnameRuleRequest>& list) {
  if (list.size() > kMaxNetworkRules)
    return InvalidArgument(
        "network.hostnames",
        "network.hostnames has " + std::to_string(list.size()) + " rules; at most 64 are allowed");
  std::vector<store::HostnameRuleConfig> out;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string f = "network.hostnames[" + std::to_string(i) + "]";
    const HostnameRuleRequest& r = list[i];
    if (!IsExactHostname(r.hostname))
      return InvalidArgument(f + ".hostname",
                             f + ".hostname must be an exact ASCII (punycode) host name; "
                                 "wildcards and addresses are not accepted");
    ASSIGN_OR_RETURN(int port, Port(r.port, f + ".port"));
    std::string host = r.hostname;
    for (auto& c : host) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back({host, port});
  }
  return out;
}

Result<NetworkConfig> CheckNetwork(const std::optional<NetworkRequest>& req) {
  NetworkConfig net;  // seed 001: public internet is the default
  if (!req) return net;
  const NetworkRequest& n = *req;
  if (n.egress) {
    if (*n.egress != "open" && *n.egress != "none" && *n.egress != "allowlist")
      return InvalidArgument("network.egress",
                             "network.egress must be one of open, none, allowlist");
    net.egress = *n.egress;
  }
  auto needs_allowlist = [&](const char* list, size_t size) -> Status {
    if (net.egress != "allowlist" && size > 0)
      return InvalidArgument(std::string("network.") + list,
                             std::string("network.") + list + " needs egress \"allowlist\"");
    return Status::Ok();
  };
  if (n.allow) RETURN_IF_ERROR(needs_allowlist("allow", n.allow->size()));
  if (n.hostnames) RETURN_IF_ERROR(needs_allowlist("hostnames", n.hostnames->size()));
  if (n.allow) {
    ASSIGN_OR_RETURN(net.allow, CheckAllow(*n.allow));
  }
  if (n.hostnames) {
    ASSIGN_OR_RETURN(net.hostnames, CheckHostnames(*n.hostnames));
  }
  if (n.dns) {
    if (net.egress == "none")
      return InvalidArgument("network.dns", "network.dns needs network egress; it is \"none\"");
    ASSIGN_OR_RETURN(net.dns, PublicAddress(*n.dns, "network.dns"));
  }
  // Seed 001: "The API accepts a public resolver in network.dns, or null to disable DNS." Open
  // egress has a default resolver, so its null is recorded; allowlist's is its default.
  net.dns_disabled = n.dns_cleared && net.egress == "open";
  // Seed 001: DNS cannot be disabled while hostname rules are present.
  if (!net.hostnames.empty() && n.dns_cleared)
    return InvalidArgument("network.dns",
                           "network.dns cannot be null while network.hostnames has rules: "
                           "hostname rules resolve through the sandbox's DNS proxy");
  return net;
}

Result<std::optional<StartupConfig>> CheckStartup(const std::optional<StartupRequest>& req) {
  if (!req) return std::optional<StartupConfig>();
  const StartupRequest& s = *req;
  StartupConfig out;
  out.mode = s.argv.given ? "command" : "image";
  if (s.mode) {
    if (*s.mode != "image" && *s.mode != "command")
      return InvalidArgument("startup.mode", "startup.mode must be \"image\" or \"command\"");
    out.mode = *s.mode;
  }
  if (out.mode == "command") {
    if (!s.argv.given) return InvalidArgument("startup.argv", "command mode needs startup.argv");
    if (!s.argv.items)
      return InvalidArgument("startup.argv", "startup.argv must be an array of strings");
    RETURN_IF_ERROR(CheckStrings(*s.argv.items, "startup.argv"));
    if (s.argv.items->empty())
      return InvalidArgument("startup.argv", "startup.argv must not be empty");
    if ((*s.argv.items)[0].empty())
      return InvalidArgument("startup.argv", "startup.argv[0] must not be empty");
    out.argv = s.argv.items;
    for (const auto& [name, list] : {std::pair{"args", &s.args}, {"entrypoint", &s.entrypoint}}) {
      if (list->given)
        return InvalidArgument(std::string("startup.") + name,
                               std::string("startup.") + name +
                                   " applies to image mode; command mode takes argv only");
    }
  } else {
    if (s.argv.given)
      return InvalidArgument("startup.argv", "startup.argv applies to command mode");
    if (s.args.items) RETURN_IF_ERROR(CheckStrings(*s.args.items, "startup.args"));
    if (s.entrypoint.items)
      RETURN_IF_ERROR(CheckStrings(*s.entrypoint.items, "startup.entrypoint"));
    out.args = s.args.items;
    out.entrypoint = s.entrypoint.items;
  }
  if (s.cwd) {
    if (s.cwd->empty() || (*s.cwd)[0] != '/' || HasNul(*s.cwd) || s.cwd->size() > 4096)
      return InvalidArgument("startup.cwd", "startup.cwd must be an absolute path");
    out.cwd = s.cwd;
  }
  if (s.user) {
    if (s.user->empty() || HasNul(*s.user) || s.user->size() > 256)
      return InvalidArgument("startup.user",
                             "startup.user must be \"uid[:gid]\" or \"name[:group]\"");
    out.user = s.user;
  }
  return std::optional<StartupConfig>(out);
}

Result<std::string> Choice(const std::optional<std::string>& value, const std::string& field,
                           std::initializer_list<const char*> allowed, const char* fallback,
                           std::initializer_list<const char*> unsupported) {
  if (!value) return std::string(fallback);
  std::string options;
  for (const char* a : allowed) options += std::string(options.empty() ? "" : ", ") + a;
  bool ok = false;
  for (const char* a : allowed) ok = ok || *value == a;
  if (!ok) return InvalidArgument(field, field + " must be one of " + options);
  for (const char* u : unsupported) {
    if (*value == u)
      return Unsupported(field, field + " '" + *value + "' is not supported yet on this host");
  }
  return *value;
}

Status CheckSecrets(const std::vector<std::string>& secrets, const FieldNames& names) {
  if (secrets.size() > kMaxSandboxSecrets)
    return InvalidArgument(names("secrets"), "at most " + std::to_string(kMaxSandboxSecrets) +
                                                 " secrets can be attached to a sandbox");
  std::set<std::string> seen;
  for (size_t i = 0; i < secrets.size(); ++i) {
    std::string field = names("secrets") + "[" + std::to_string(i) + "]";
    RETURN_IF_ERROR(ValidateSecretName(secrets[i], field));
    if (!seen.insert(secrets[i]).second)
      return InvalidArgument(field, "secret '" + secrets[i] + "' is listed twice");
  }
  return Status::Ok();
}

}  // namespace

std::map<std::string, std::string> CallerLabels(const std::map<std::string, std::string>& labels) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : labels)
    if (!key.starts_with(kPlatformLabelPrefix)) out.emplace(key, value);
  return out;
}

Result<NewSandbox> ValidateCreateSandbox(const CreateSandbox& req, const std::string& default_image,
                                         const FieldNames& names) {
  NewSandbox out;
  SandboxConfig& c = out.config;
  ASSIGN_OR_RETURN(int64_t cpu, IntegerIn(req.cpu, names("cpu"), limits::kCpuMin, limits::kCpuMax,
                                          limits::kCpuDefault));
  c.cpu = static_cast<int>(cpu);
  ASSIGN_OR_RETURN(c.memory_mib,
                   IntegerIn(req.memory_mib, names("memory_mib"), limits::kMemoryMiBMin,
                             limits::kMemoryMiBMax, limits::kMemoryMiBDefault));
  ASSIGN_OR_RETURN(c.disk_mib, IntegerIn(req.disk_mib, names("disk_mib"), limits::kDiskMiBMin,
                                         limits::kDiskMiBMax, limits::kDiskMiBDefault));
  if (!req.no_expiry) {
    ASSIGN_OR_RETURN(c.ttl_seconds,
                     IntegerIn(req.ttl_seconds, names("ttl_seconds"), limits::kTtlSecondsMin,
                               limits::kTtlSecondsMax, limits::kTtlSecondsDefault));
  }
  if (req.idle_timeout_seconds) {
    ASSIGN_OR_RETURN(c.idle_timeout_seconds,
                     IntegerIn(req.idle_timeout_seconds, names("idle_timeout_seconds"),
                               limits::kIdleTimeoutSecondsMin, limits::kIdleTimeoutSecondsMax,
                               limits::kIdleTimeoutSecondsMin));
  }
  RETURN_IF_ERROR(CheckLabels(req.labels, names));
  c.labels = req.labels;
  for (const auto& [key, value] : req.platform_labels) {
    if (!key.starts_with(kPlatformLabelPrefix))
      return Internal("platform label '" + key + "' lacks the 'platform.' prefix");
    c.labels[key] = value;
  }

  if (req.image && req.image_id)
    return InvalidArgument(names("image_id"), "supply either " + names("image") + " or " +
                                                  names("image_id") + ", not both");
  if (req.image_id && (req.image_id->size() > 64 || !req.image_id->starts_with("img_")))
    return InvalidArgument(names("image_id"),
                           names("image_id") + " must be the id of an image (\"img_...\")");
  if (req.image && (req.image->empty() || req.image->size() > limits::kMaxImageReferenceBytes ||
                    HasNul(*req.image)))
    return InvalidArgument(names("image"),
                           names("image") + " must be an image reference such as \"debian:12\"");
  // An image_id is resolved by the service to the organization's image reference.
  c.image = req.image.value_or(default_image);
  c.image_id = req.image_id;
  ASSIGN_OR_RETURN(c.network, CheckNetwork(req.network));
  ASSIGN_OR_RETURN(c.startup, CheckStartup(req.startup));
  RETURN_IF_ERROR(CheckEnv(req.env, names));
  out.env = req.env;
  RETURN_IF_ERROR(CheckSecrets(req.secrets, names));
  out.secrets = req.secrets;
  if (req.gpu)
    return Unsupported(names("gpu"), std::string("no GPU sandbox can run: ") + kNoGpuReason);
  ASSIGN_OR_RETURN(c.security_profile, Choice(req.security_profile, names("security_profile"),
                                              {"restricted", "developer"}, "restricted", {}));
  if (req.storage) RETURN_IF_ERROR(storage::ValidateVolumeName(*req.storage, names("storage")));
  // The database is reached through the sandbox's own network interface, which egress "none"
  // does not have.
  if (req.database && c.network.egress == "none")
    return InvalidArgument(names("database"),
                           "a sandbox with egress \"none\" has no network, so it cannot reach "
                           "the database");
  c.database = req.database;
  ASSIGN_OR_RETURN(c.startup_class, Choice(req.startup_class, names("startup_class"),
                                           {"durable", "instant"}, "instant", {}));
  // Naming storage asks for a durable sandbox unless startup_class says otherwise.
  if (req.storage && !req.startup_class) c.startup_class = "durable";
  if (c.startup_class == "instant" && req.storage)
    return InvalidArgument(names("storage"),
                           "an instant sandbox has a disposable workspace and no persistent "
                           "attachment: use " +
                               names("startup_class") + " durable to mount storage");
  // A durable sandbox mounts its storage (the organization's default one when unnamed) at
  // /workspace.
  if (c.startup_class == "durable") c.storage = req.storage.value_or(storage::kDefaultVolumeName);
  return out;
}

}  // namespace adapt::core
