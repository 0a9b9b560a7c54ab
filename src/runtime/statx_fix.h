// The statx fix: Debian's runsc 20221219 answers statx(2) with EINVAL whenever the flags hold
// AT_NO_AUTOMOUNT, which coreutils 9 always passes, so `ls /` fails in every sandbox. When
// the runsc in use does that, each sandbox gets adapt-statx.so (statx_preload.c, from the
// helpers directory at /.adapt) named in its /etc/ld.so.preload; glibc programs then retry
// without the flag. musl ignores that file and static programs load nothing.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::runtime {

inline constexpr const char* kStatxPreloadName = "adapt-statx.so";
inline constexpr const char* kStatxPreloadInSandbox = "/.adapt/adapt-statx.so";
inline constexpr const char* kLdSoPreloadInSandbox = "/etc/ld.so.preload";

// Runs adapt-statx.so as a program under `runsc do` (runsc's root in `probe_root`), once per
// adaptd start: true when runsc refuses AT_NO_AUTOMOUNT but statx otherwise works (the fix
// is needed), false when it accepts it. An error when the probe could not tell; about 0.3 s.
Result<bool> RunscRefusesNoAutomount(const std::string& runsc, const std::string& platform,
                                     const std::string& probe_root, const std::string& preload);

// The /etc/ld.so.preload a sandbox sees: the image's own list (`image_list`, empty when it has
// none), then adapt-statx.so.
std::string PreloadListWithStatxFix(const std::string& image_list);

}  // namespace adapt::runtime
