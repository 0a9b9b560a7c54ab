#include "runtime/statx_fix.h"

#include "os/files.h"
#include "os/process.h"

namespace adapt::runtime {

Result<bool> RunscRefusesNoAutomount(const std::string& runsc, const std::string& platform,
                                     const std::string& probe_root, const std::string& preload) {
  RETURN_IF_ERROR(os::MakeDirs(probe_root, 0700));
  // `runsc do` runs a host program in a sandbox over the host's root; timeout(1) keeps a
  // wedged runsc from holding adaptd's start-up.
  auto r = os::RunCommand({"timeout", "--kill-after=5", "30", runsc, "--root=" + probe_root,
                           "--platform=" + platform, "--network=none", "do", preload});
  if (!r.ok()) return r.status().WithContext("probing runsc's statx");
  if (!r->status.signaled() && r->status.exit_code == 0) return false;
  if (!r->status.signaled() && r->status.exit_code == 1) return true;
  std::string out = r->output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return Internal("probing runsc's statx: `runsc do " + preload + "` ended with " +
                  (r->status.signaled() ? "signal " + std::to_string(r->status.signal)
                                        : "exit " + std::to_string(r->status.exit_code)) +
                  (out.empty() ? "" : ": " + out.substr(out.size() > 300 ? out.size() - 300 : 0)));
}

std::string PreloadListWithStatxFix(const std::string& image_list) {
  std::string list = image_list;
  if (!list.empty() && list.back() != '\n') list += '\n';
  return list + kStatxPreloadInSandbox + "\n";
}

}  // namespace adapt::runtime
