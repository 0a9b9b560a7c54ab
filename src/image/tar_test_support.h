// Tars for the image unit tests, written with libarchive in memory.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <string>
#include <vector>

namespace adapt::image::testing_support {

struct TarEntry {
  std::string name;
  std::string content;
  std::string symlink;  // a symlink to this target when set
};

// A tar of `entries` (at most 4 MiB), written with libarchive.
inline std::string MakeTar(const std::vector<TarEntry>& entries) {
  std::vector<char> buf(1 << 22);
  size_t used = 0;
  archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  archive_write_open_memory(a, buf.data(), buf.size(), &used);
  for (const auto& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    if (!e.symlink.empty()) {
      archive_entry_set_filetype(entry, AE_IFLNK);
      archive_entry_set_symlink(entry, e.symlink.c_str());
    } else {
      archive_entry_set_filetype(entry, AE_IFREG);
      archive_entry_set_perm(entry, 0644);
      archive_entry_set_size(entry, static_cast<la_int64_t>(e.content.size()));
    }
    archive_write_header(a, entry);
    if (e.symlink.empty()) archive_write_data(a, e.content.data(), e.content.size());
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
  return std::string(buf.data(), used);
}

}  // namespace adapt::image::testing_support
