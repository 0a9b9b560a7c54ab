// StartupPlan: what process a sandbox starts, by seed 001's rules. Image mode runs
// ENTRYPOINT followed by CMD; `args` replaces CMD; `entrypoint` replaces ENTRYPOINT and
// clears the inherited CMD; empty arrays clear values. Command mode runs argv literally.
// No startup: an interactive sandbox whose init is adapt-pause. Both modes inherit the
// image's working directory, environment and user unless startup.cwd/user override them;
// the sandbox's env overrides the image's.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "core/image_catalog.h"
#include "runtime/oci_spec.h"
#include "store/sandbox_config.h"

namespace adapt::core {

// Where adapt-pause is inside every sandbox.
inline constexpr const char* kPauseBinary = "/.adapt/adapt-pause";

// Resolves "uid[:gid]" or "name[:group]" against the image's /etc/passwd and /etc/group
// under `rootfs`, as docker does. Errors name `field`.
Result<std::pair<uint32_t, uint32_t>> ResolveUserIds(const std::string& user,
                                                     const std::string& rootfs,
                                                     const std::string& field);

// `startup` is the validated startup config (unset: interactive).
Result<runtime::ProcessSpec> PlanStartup(const std::optional<store::StartupConfig>& startup,
                                         const Image& image,
                                         const std::map<std::string, std::string>& env);

}  // namespace adapt::core
