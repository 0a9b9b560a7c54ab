#include "runtime/security_profile.h"

namespace adapt::runtime {

const std::vector<std::string>& ProfileCapabilities(const std::string& profile) {
  // Measured with runsc 20221219 (README "Security profiles"): AUDIT_WRITE, KILL and
  // NET_BIND_SERVICE are runsc's own proposal; CHOWN, SETUID and SETGID let a root master
  // (nginx) make its temp directories its worker's and switch to that worker.
  static const std::vector<std::string> kRestricted = {"CAP_AUDIT_WRITE",      "CAP_KILL",
                                                       "CAP_NET_BIND_SERVICE", "CAP_CHOWN",
                                                       "CAP_SETUID",           "CAP_SETGID"};
  // The package-manager set on top: apt-get needs DAC_OVERRIDE (its _apt-owned partial
  // directories); dpkg needs FOWNER and FSETID (modes and set-id bits of files it gives to
  // other owners); SETFCAP is what maintainer scripts' setcap asks for.
  static const std::vector<std::string> kDeveloper = {
      "CAP_AUDIT_WRITE", "CAP_KILL",         "CAP_NET_BIND_SERVICE", "CAP_CHOWN",  "CAP_SETUID",
      "CAP_SETGID",      "CAP_DAC_OVERRIDE", "CAP_FOWNER",           "CAP_FSETID", "CAP_SETFCAP"};
  return profile == kDeveloperProfile ? kDeveloper : kRestricted;
}

const std::vector<std::string>& PackageDatabaseDirs() {
  static const std::vector<std::string> kDirs = {"/var/lib/dpkg", "/var/lib/rpm", "/lib/apk/db"};
  return kDirs;
}

}  // namespace adapt::runtime
