// Sandbox disks made from formatted templates: mkfs.ext4 runs once per disk size, and each
// sandbox's disk is a sparse copy of that size's template (the few MiB of metadata mkfs
// wrote; about a third of mkfs's time, bench/README.md, create_latency).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "base/status.h"

namespace adapt::runtime {

class DiskTemplates {
 public:
  // Templates live in `dir` (adaptd's own: no tenant reaches it), at most `max_sizes` of
  // them: disk sizes are the tenants' choice, so the templates' space is bounded; a size
  // beyond them is formatted directly.
  explicit DiskTemplates(std::string dir, size_t max_sizes = 4);

  // Creates `image` as an empty, unencrypted ext4 of `mib` MiB (through `image`.new, then a
  // rename). Every copy has its template's UUID and directory hash seed: these disks are
  // only ever mounted by adaptd, one per sandbox, and never encrypted (fscrypt volumes and
  // the checkpoint store format their own). Blocking; thread-safe.
  Status CreateDisk(const std::string& image, uint64_t mib);

  // Removes what a crash during a template's formatting left (its temporary file). At
  // start-up, before any CreateDisk.
  void RemoveUnfinished();

  // The template file for `mib` MiB (present or not).
  std::string TemplatePath(uint64_t mib) const;

 private:
  size_t CountTemplates() const;

  std::string dir_;
  size_t max_sizes_;
  std::mutex mu_;  // one template is made at a time
};

}  // namespace adapt::runtime
