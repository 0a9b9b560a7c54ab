// Where a sandbox finds adapt's helpers (/.adapt) and its agent's socket. A restore needs the
// mounts its checkpoint was taken with (runsc restores onto the saved mount tree only), so
// the layout a sandbox booted with is recorded in its directory and copied into each
// checkpoint, and a restore takes the checkpoint's.
#pragma once

#include <optional>
#include <string>

#include "base/status.h"

namespace adapt::runtime {

enum class HelpersLayout {
  // Sandboxes booted before the layout was recorded: /.adapt is adaptd's helpers directory,
  // shared by every sandbox, and the socket has a mount of its own, /.adapt-session.
  kShared = 1,
  // /.adapt is the sandbox's own directory: the helpers hard-linked in and the agent's
  // socket beside them. One gofer mount fewer than kShared (about 0.16 MiB a sandbox).
  kOwn = 2,
};

struct HelpersView {
  HelpersLayout layout = HelpersLayout::kOwn;
  std::string host_dir;           // bound read-only at /.adapt
  std::string session_dir;        // bound read-only at /.adapt-session; empty for kOwn
  std::string host_socket;        // where adaptd listens for the agent
  std::string socket_in_sandbox;  // where the agent connects
};

// The paths of `layout` for the sandbox whose directory is `sandbox_dir`.
HelpersView ViewOf(HelpersLayout layout, const std::string& sandbox_dir,
                   const std::string& helpers_dir);

// Makes the kOwn directory of `view`: every helper of `helpers_dir` hard-linked in. With
// `refresh`, links to older helpers are replaced by the current ones (a fresh boot); without,
// the links there stay (a restore: its processes map the files they were saved with). An
// error when a link cannot be made (the helpers on another filesystem).
Status PrepareOwnHelpers(const HelpersView& view, const std::string& helpers_dir, bool refresh);

// The helpers a sandbox boots with, made ready and recorded in `sandbox_dir`: for a restore,
// the layout of its checkpoint (`restoring`; an error when that cannot be had); for a fresh
// boot, kOwn, or kShared when the helpers cannot be linked (logged).
Result<HelpersView> PrepareHelpers(const std::string& sandbox_dir, const std::string& helpers_dir,
                                   std::optional<HelpersLayout> restoring);

// Records `layout` in `dir` (a sandbox's directory, or a checkpoint image beside its files).
Status RecordHelpersLayout(const std::string& dir, HelpersLayout layout);
// What RecordHelpersLayout left in `dir`; kShared when nothing (older sandboxes and images).
HelpersLayout RecordedHelpersLayout(const std::string& dir);

}  // namespace adapt::runtime
