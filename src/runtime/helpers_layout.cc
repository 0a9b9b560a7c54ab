#include "runtime/helpers_layout.h"

#include "base/log.h"
#include "os/files.h"
#include "runtime/oci_spec.h"

namespace adapt::runtime {
namespace {

constexpr const char* kLayoutFile = "helpers-layout";
constexpr const char* kOwnDir = "adapt";
constexpr const char* kSessionDir = "session";
constexpr const char* kSocketName = "agent.sock";

}  // namespace

HelpersView ViewOf(HelpersLayout layout, const std::string& sandbox_dir,
                   const std::string& helpers_dir) {
  HelpersView v;
  v.layout = layout;
  if (layout == HelpersLayout::kOwn) {
    v.host_dir = sandbox_dir + "/" + kOwnDir;
    v.host_socket = v.host_dir + "/" + kSocketName;
    v.socket_in_sandbox = std::string(kHelpersMount) + "/" + kSocketName;
  } else {
    v.host_dir = helpers_dir;
    v.session_dir = sandbox_dir + "/" + kSessionDir;
    v.host_socket = v.session_dir + "/" + kSocketName;
    v.socket_in_sandbox = std::string(kAgentSessionMount) + "/" + kSocketName;
  }
  return v;
}

Status PrepareOwnHelpers(const HelpersView& view, const std::string& helpers_dir, bool refresh) {
  // 0755: the sandbox's root reads it through the gofer; the socket in it is 0600.
  RETURN_IF_ERROR(os::MakeDirs(view.host_dir, 0755));
  for (const auto& name : os::ListDir(helpers_dir)) {
    std::string from = helpers_dir + "/" + name, to = view.host_dir + "/" + name;
    // WriteFileAtomic's temporary files are not helpers.
    if (name.ends_with(".tmp") || os::SameFile(from, to)) continue;
    if (!refresh && os::Exists(to)) continue;
    RETURN_IF_ERROR(os::HardLinkReplacing(from, to).WithContext("linking the sandbox's helpers"));
  }
  return Status::Ok();
}

Result<HelpersView> PrepareHelpers(const std::string& sandbox_dir, const std::string& helpers_dir,
                                   std::optional<HelpersLayout> restoring) {
  HelpersView view = ViewOf(restoring.value_or(HelpersLayout::kOwn), sandbox_dir, helpers_dir);
  if (view.layout == HelpersLayout::kOwn) {
    Status linked = PrepareOwnHelpers(view, helpers_dir, !restoring);
    if (!linked.ok() && restoring) return linked;
    if (!linked.ok()) {
      spdlog::warn("{}; {} sees the shared helpers directory", linked.message(), sandbox_dir);
      view = ViewOf(HelpersLayout::kShared, sandbox_dir, helpers_dir);
    }
  }
  RETURN_IF_ERROR(RecordHelpersLayout(sandbox_dir, view.layout));
  return view;
}

Status RecordHelpersLayout(const std::string& dir, HelpersLayout layout) {
  return os::WriteFileAtomic(dir + "/" + kLayoutFile,
                             std::to_string(static_cast<int>(layout)) + "\n", 0600);
}

HelpersLayout RecordedHelpersLayout(const std::string& dir) {
  auto text = os::ReadFile(dir + "/" + kLayoutFile);
  if (text.ok() && text->starts_with(std::to_string(static_cast<int>(HelpersLayout::kOwn))))
    return HelpersLayout::kOwn;
  return HelpersLayout::kShared;
}

}  // namespace adapt::runtime
