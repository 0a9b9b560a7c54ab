// The security profiles a sandbox runs under (seed 000): what its processes may do as root.
// Both apply to the workload, to every command (agent or `runsc exec`) and to file
// operations, which all run with the workload's capabilities. README "Security profiles"
// justifies each capability as measured under this gVisor.
#pragma once

#include <string>
#include <vector>

namespace adapt::runtime {

inline constexpr const char* kRestrictedProfile = "restricted";
inline constexpr const char* kDeveloperProfile = "developer";

// The capabilities ("CAP_...") of `profile`'s processes: restricted's set runs ordinary
// images (a root master that drops to a worker user); developer adds what apt-get and dpkg
// need. Any other name gets restricted's set.
const std::vector<std::string>& ProfileCapabilities(const std::string& profile);

// The package managers' databases that restricted sandboxes see read-only, so that dpkg,
// apt-get, rpm and apk fail at once with a clear error rather than half-install: root owns
// these files, so no capability set alone keeps root from writing them.
const std::vector<std::string>& PackageDatabaseDirs();

}  // namespace adapt::runtime
