#include "core/startup_plan.h"

#include <sstream>

#include "core/sandbox_limits.h"
#include "os/file_in_root.h"

namespace adapt::core {
namespace {

constexpr const char* kDefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

bool IsNumber(const std::string& s) {
  return !s.empty() && s.size() < 10 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The most of an image's /etc/passwd or /etc/group that is read.
constexpr size_t kMaxAccountFileBytes = 1 << 20;

// Finds the entry whose field `column` is `value` in the image's /etc/passwd or /etc/group
// (`file`, resolved inside `rootfs`: the image's links cannot lead to the host's files);
// returns its fields, empty when there is none. An error when the file is there but is not
// a regular file of at most 1 MiB.
Result<std::vector<std::string>> FindEntry(const std::string& rootfs, const std::string& file,
                                           const std::string& value, size_t column = 0) {
  auto text = os::ReadFileInRoot(rootfs, file, kMaxAccountFileBytes);
  if (!text.ok() && text.status().code() == Code::kNotFound) return std::vector<std::string>{};
  if (!text.ok())
    return InvalidArgument("image",
                           "the image's " + file + " is not a regular file of at most 1 MiB");
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    // Every field, the empty last one too ("app:x:1000:", a group without members).
    std::vector<std::string> fields;
    for (size_t start = 0;;) {
      size_t colon = line.find(':', start);
      fields.push_back(line.substr(start, colon - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    if (fields.size() >= 4 && fields[column] == value) return fields;
  }
  return std::vector<std::string>{};
}

// Resolves "uid[:gid]" or "name[:group]" against the image's /etc/passwd and /etc/group.
Status ResolveUser(const std::string& user, const std::string& rootfs, runtime::ProcessSpec& p,
                   std::string& home, const std::string& field = "startup.user") {
  if (user.empty()) return Status::Ok();
  std::string u = user, g;
  if (auto colon = user.find(':'); colon != std::string::npos) {
    u = user.substr(0, colon);
    g = user.substr(colon + 1);
  }
  auto bad = [&](const std::string& what) {
    return InvalidArgument(field, field + " '" + user + "': " + what);
  };
  if (IsNumber(u)) {
    p.uid = static_cast<uint32_t>(std::stoul(u));
    p.gid = p.uid;
    // A uid the image knows takes its primary group and home from there, as in docker.
    auto found = FindEntry(rootfs, "/etc/passwd", u, 2);
    std::vector<std::string> entry = found.ok() ? *found : std::vector<std::string>{};
    if (!entry.empty() && IsNumber(entry[3])) p.gid = static_cast<uint32_t>(std::stoul(entry[3]));
    if (entry.size() >= 6) home = entry[5];
  } else {
    auto found = FindEntry(rootfs, "/etc/passwd", u);
    if (!found.ok()) return bad(found.status().message());
    const auto& entry = *found;
    if (entry.empty()) return bad("no such user in the image");
    if (!IsNumber(entry[2]) || !IsNumber(entry[3]))
      return bad("the image's /etc/passwd entry is malformed");
    p.uid = static_cast<uint32_t>(std::stoul(entry[2]));
    p.gid = static_cast<uint32_t>(std::stoul(entry[3]));
    if (entry.size() >= 6) home = entry[5];
  }
  if (!g.empty()) {
    if (IsNumber(g)) {
      p.gid = static_cast<uint32_t>(std::stoul(g));
    } else {
      auto found = FindEntry(rootfs, "/etc/group", g);
      if (!found.ok()) return bad(found.status().message());
      const auto& entry = *found;
      if (entry.empty() || !IsNumber(entry[2])) return bad("no such group in the image");
      p.gid = static_cast<uint32_t>(std::stoul(entry[2]));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::pair<uint32_t, uint32_t>> ResolveUserIds(const std::string& user,
                                                     const std::string& rootfs,
                                                     const std::string& field) {
  runtime::ProcessSpec p;
  std::string home;
  RETURN_IF_ERROR(ResolveUser(user, rootfs, p, home, field));
  return std::make_pair(p.uid, p.gid);
}

Result<runtime::ProcessSpec> PlanStartup(const std::optional<store::StartupConfig>& startup,
                                         const Image& image,
                                         const std::map<std::string, std::string>& env) {
  runtime::ProcessSpec p;
  const ImageConfig& ic = image.config;
  if (!startup) {
    p.argv = {kPauseBinary};
    p.idle = true;
  } else if (startup->mode == "command") {
    p.argv = startup->argv.value_or(std::vector<std::string>{});
  } else {
    bool has_entrypoint = startup->entrypoint.has_value();
    std::vector<std::string> entrypoint = has_entrypoint ? *startup->entrypoint : ic.entrypoint;
    std::vector<std::string> cmd;
    if (startup->args) {
      cmd = *startup->args;
    } else if (!has_entrypoint) {
      cmd = ic.cmd;
    }
    p.argv = entrypoint;
    p.argv.insert(p.argv.end(), cmd.begin(), cmd.end());
    if (p.argv.empty())
      return InvalidArgument(
          "startup",
          "nothing to run: the image has no ENTRYPOINT or CMD left after startup's overrides");
  }

  std::string cwd = startup && startup->cwd ? *startup->cwd : "";
  p.cwd = !cwd.empty() ? cwd : (!ic.working_dir.empty() ? ic.working_dir : "/");
  // A missing directory is made at the start; a file there would fail it with runsc's words.
  if (!cwd.empty() && os::NonDirectoryInRoot(image.rootfs, cwd))
    return InvalidArgument("startup.cwd",
                           "startup.cwd '" + cwd + "' is not a directory in the image");
  std::string user = startup && startup->user ? *startup->user : ic.user;
  std::string home;
  RETURN_IF_ERROR(ResolveUser(user, image.rootfs, p, home));

  // Image environment first, the sandbox's env overrides it; order kept for readability.
  std::vector<std::pair<std::string, std::string>> merged;
  auto set = [&](const std::string& k, const std::string& v) {
    for (auto& kv : merged) {
      if (kv.first == k) {
        kv.second = v;
        return;
      }
    }
    merged.emplace_back(k, v);
  };
  for (const auto& kv : ic.env) {
    auto eq = kv.find('=');
    if (eq != std::string::npos) set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (const auto& [k, v] : env) set(k, v);
  bool has_path = false, has_home = false;
  for (const auto& kv : merged) {
    has_path = has_path || kv.first == "PATH";
    has_home = has_home || kv.first == "HOME";
  }
  if (!has_path) merged.emplace_back("PATH", kDefaultPath);
  if (!has_home) merged.emplace_back("HOME", !home.empty() ? home : (p.uid == 0 ? "/root" : "/"));
  size_t bytes = 0;
  for (const auto& [k, v] : merged) {
    p.env.push_back(k + "=" + v);
    bytes += k.size() + v.size() + 2;
  }
  if (bytes > limits::kMaxStartupEnvBytes)
    return InvalidArgument(
        "env", "the startup environment exceeds the 32 KiB command limit after merging");
  return p;
}

}  // namespace adapt::core
