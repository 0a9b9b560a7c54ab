#include "storage/workspace_copy.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace adapt::storage {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view BaseName(std::string_view p) {
  size_t slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

std::string_view Extension(std::string_view name) {
  size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
}

}  // namespace

Result<std::string> WorkspacePath(const std::string& p) {
  if (p.empty() || p.size() > 4096 || p.find('\0') != std::string::npos)
    return InvalidArgument("workspace_path", "workspace_path must be 1..4096 bytes without NUL");
  std::string full = p.front() == '/' ? p : "/workspace/" + p;
  if (full.rfind("/workspace/", 0) != 0)
    return InvalidArgument("workspace_path",
                           "workspace_path must be relative to /workspace or under /workspace");
  size_t start = 0;
  for (size_t i = 0; i <= full.size(); ++i) {
    if (i < full.size() && full[i] != '/') continue;
    std::string_view seg(full.data() + start, i - start);
    if (seg == "..") return InvalidArgument("workspace_path", "workspace_path must not use '..'");
    start = i + 1;
  }
  if (full.back() == '/')
    return InvalidArgument("workspace_path", "workspace_path names a directory");
  return full;
}

std::string ArtifactPrefix(const std::string& sandbox_id) {
  return "artifacts/" + sandbox_id + "/";
}

std::string ContentTypeFor(std::string_view name) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {"html", "text/html; charset=utf-8"},
      {"htm", "text/html; charset=utf-8"},
      {"css", "text/css; charset=utf-8"},
      {"js", "text/javascript; charset=utf-8"},
      {"mjs", "text/javascript; charset=utf-8"},
      {"json", "application/json"},
      {"txt", "text/plain; charset=utf-8"},
      {"md", "text/markdown; charset=utf-8"},
      {"csv", "text/csv; charset=utf-8"},
      {"xml", "application/xml"},
      {"svg", "image/svg+xml"},
      {"png", "image/png"},
      {"jpg", "image/jpeg"},
      {"jpeg", "image/jpeg"},
      {"gif", "image/gif"},
      {"webp", "image/webp"},
      {"ico", "image/x-icon"},
      {"pdf", "application/pdf"},
      {"zip", "application/zip"},
      {"gz", "application/gzip"},
      {"tar", "application/x-tar"},
      {"wasm", "application/wasm"},
      {"woff2", "font/woff2"},
      {"py", "text/x-python; charset=utf-8"},
      {"log", "text/plain; charset=utf-8"}};
  std::string ext = Lower(Extension(BaseName(name)));
  for (const auto& [e, t] : kTypes)
    if (ext == e) return t;
  return "application/octet-stream";
}

bool LooksLikeSecretPath(std::string_view path) {
  std::string p = Lower(path);
  std::string name(BaseName(p));
  static const char* kNames[] = {"id_rsa",       "id_dsa",       "id_ecdsa",         "id_ed25519",
                                 ".env",         ".netrc",       ".pgpass",          ".npmrc",
                                 ".pypirc",      "credentials",  ".git-credentials", ".htpasswd",
                                 "secrets.json", "secrets.yaml", "secrets.yml"};
  for (const char* n : kNames)
    if (name == n) return true;
  if (name.rfind(".env.", 0) == 0) return true;
  static const char* kExts[] = {"pem", "key", "p12", "pfx", "jks", "kdbx", "keystore", "asc"};
  std::string ext(Extension(name));
  for (const char* e : kExts)
    if (ext == e) return true;
  for (const char* dir : {"/.ssh/", "/.aws/", "/.gnupg/", "/.kube/", "/.docker/"})
    if (p.find(dir) != std::string::npos) return true;
  return false;
}

Status CheckOpenedWorkspaceFile(const std::string& requested, const std::string& opened) {
  if (opened.empty())
    return Internal("the sandbox did not say which file " + requested +
                    " is; it is not copied to object storage");
  std::string path = opened;
  // What /proc/self/fd shows once the file is unlinked: a name like ".env (deleted)" must not
  // slip past the name rules.
  constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.ends_with(kDeleted))
    path.resize(path.size() - kDeleted.size());
  if (!WorkspacePath(path).ok() || path.rfind("/workspace/", 0) != 0)
    return InvalidArgument("workspace_path", requested + " resolves to " + path +
                                                 ", outside /workspace; it is not copied to "
                                                 "object storage");
  if (LooksLikeSecretPath(path))
    return InvalidArgument("workspace_path",
                           requested + " resolves to " + path +
                               ", which looks like a credential file (keys, tokens, .env); it "
                               "is not copied to object storage");
  return Status::Ok();
}

bool SecretScanner::Feed(const char* data, size_t n) {
  if (found_) return false;
  static const std::regex kSecret(
      "PRIVATE KEY-----|AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36}|"
      "github_pat_[A-Za-z0-9_]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}|sk-(proj|ant|live)-[A-Za-z0-9_-]{"
      "16,}|"
      "sk_live_[A-Za-z0-9]{16,}|glpat-[A-Za-z0-9_-]{20}|AIza[0-9A-Za-z_-]{35}|"
      "stk_[a-z0-9]{10,64}\\.[0-9a-f]{40}|aws_secret_access_key|SANDBOX_STORAGE_TOKEN=");
  // The last bytes of the previous chunk, so that a marker split across chunks is seen.
  std::string window = tail_;
  window.append(data, n);
  // std::regex is slow: run it only where a fixed anchor of some pattern occurs.
  static const char* kAnchors[] = {"KEY-----",
                                   "AKIA",
                                   "ASIA",
                                   "ghp_",
                                   "gho_",
                                   "ghu_",
                                   "ghs_",
                                   "ghr_",
                                   "github_pat_",
                                   "xox",
                                   "sk-",
                                   "sk_live_",
                                   "glpat-",
                                   "AIza",
                                   "stk_",
                                   "aws_secret_access_key",
                                   "SANDBOX_STORAGE_TOKEN="};
  bool anchored = false;
  for (const char* a : kAnchors) anchored = anchored || window.find(a) != std::string::npos;
  if (anchored && std::regex_search(window, kSecret)) {
    found_ = true;
    return false;
  }
  tail_ = window.size() > 128 ? window.substr(window.size() - 128) : window;
  return true;
}

}  // namespace adapt::storage
