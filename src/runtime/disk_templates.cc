#include "runtime/disk_templates.h"

#include "base/ignore_error.h"
#include "os/files.h"
#include "os/mount.h"
#include "os/sparse_copy.h"

namespace adapt::runtime {
namespace {

constexpr char kPrefix[] = "ext4-";
constexpr char kSuffix[] = ".img";

bool IsTemplateName(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  return name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

DiskTemplates::DiskTemplates(std::string dir, size_t max_sizes)
    : dir_(std::move(dir)), max_sizes_(max_sizes) {}

std::string DiskTemplates::TemplatePath(uint64_t mib) const {
  return dir_ + "/" + kPrefix + std::to_string(mib) + kSuffix;
}

size_t DiskTemplates::CountTemplates() const {
  size_t n = 0;
  for (const auto& name : os::ListDir(dir_))
    if (IsTemplateName(name)) ++n;
  return n;
}

void DiskTemplates::RemoveUnfinished() {
  std::lock_guard lock(mu_);
  for (const auto& name : os::ListDir(dir_)) {
    if (IsTemplateName(name)) continue;
    IgnoreError(os::RemoveTree(dir_ + "/" + name), "an unfinished template is formatted again");
  }
}

Status DiskTemplates::CreateDisk(const std::string& image, uint64_t mib) {
  const std::string source = TemplatePath(mib);
  bool have_template;
  {
    std::lock_guard lock(mu_);
    have_template = os::Exists(source);
    if (!have_template && CountTemplates() < max_sizes_) {
      RETURN_IF_ERROR(os::MakeDirs(dir_, 0700));
      // Formatted as source.new and renamed: a template is whole or absent, even after a crash.
      RETURN_IF_ERROR(os::CreateExt4Image(source, mib).WithContext("formatting a disk template"));
      have_template = true;
    }
  }
  if (!have_template) return os::CreateExt4Image(image, mib);
  const std::string tmp = image + ".new";
  // No fsync: like a freshly formatted image, a disk cut short by a crash is made again.
  RETURN_IF_ERROR(os::CopySparseFile(source, tmp, os::CopySync::kNone)
                      .WithContext("copying the disk template"));
  return os::Rename(tmp, image);
}

}  // namespace adapt::runtime
