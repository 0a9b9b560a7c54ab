#include "image/archive_staging.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <vector>

#include "base/text.h"
#include "image/digest.h"

namespace adapt::image {
namespace {

constexpr size_t kChunk = 256 * 1024;
// An image archive holds a few files per layer; far more is not an image archive.
constexpr size_t kMaxEntries = 100000;
constexpr int kMaxLinkHops = 8;

struct ReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};

// libarchive pulls the upload through this, one chunk at a time.
struct Upload {
  const ByteSource* source;
  std::vector<char> buf = std::vector<char>(kChunk);
  bool failed = false;
};

la_ssize_t ReadUpload(archive* a, void* opaque, const void** out) {
  auto* up = static_cast<Upload*>(opaque);
  long n = (*up->source)(up->buf.data(), up->buf.size());
  if (n < 0) {
    up->failed = true;
    archive_set_error(a, EIO, "the upload ended before the end of the archive");
    return -1;
  }
  *out = up->buf.data();
  return n;
}

// An entry name in an error or a log line: the archive's text.
std::string Quoted(const std::string& name) { return "'" + PrintableAscii(name) + "'"; }

Status Bad(const std::string& why) {
  return InvalidArgument("archive", "the image archive is not a readable tar file: " + why);
}

std::string ParentOf(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// A symlink's target as a clean archive path: relative to the link's directory, ".." allowed
// as long as it stays inside the archive (`docker save` links "ID/layer.tar" to "../X.tar").
bool ResolveLink(const std::string& link_path, const std::string& target, std::string& out) {
  std::vector<std::string> parts;
  std::string joined = target.starts_with("/") ? target : ParentOf(link_path) + "/" + target;
  size_t i = 0;
  while (i <= joined.size()) {
    auto end = joined.find('/', i);
    if (end == std::string::npos) end = joined.size();
    std::string comp = joined.substr(i, end - i);
    i = end + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      if (parts.empty()) return false;
      parts.pop_back();
      continue;
    }
    parts.push_back(comp);
  }
  out.clear();
  for (const auto& p : parts) out += (out.empty() ? "" : "/") + p;
  return !out.empty();
}

}  // namespace

const StagedFile* StagedArchive::Find(const std::string& name) const {
  std::string path;
  if (!CleanArchivePath(name, path)) return nullptr;
  for (int hop = 0; hop <= kMaxLinkHops; ++hop) {
    if (auto it = files.find(path); it != files.end()) return &it->second;
    auto link = links.find(path);
    if (link == links.end()) return nullptr;
    path = link->second;
  }
  return nullptr;
}

Result<StagedArchive> StageArchive(const ByteSource& source, const std::string& dir,
                                   uint64_t max_bytes,
                                   const std::function<Status(uint64_t bytes)>& room) {
  Upload upload{&source};
  std::unique_ptr<archive, ReadDeleter> in(archive_read_new());
  archive_read_support_filter_gzip(in.get());
  archive_read_support_filter_zstd(in.get());
  archive_read_support_format_tar(in.get());
  if (archive_read_open(in.get(), &upload, nullptr, ReadUpload, nullptr) != ARCHIVE_OK) {
    if (upload.failed) return Bad("the upload ended early");
    const char* err = archive_error_string(in.get());
    return Bad(err ? PrintableAscii(err, 300) : "empty or unknown format");
  }
  StagedArchive staged;
  std::vector<char> buf(kChunk);
  archive_entry* entry = nullptr;
  while (true) {
    int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      const char* err = archive_error_string(in.get());
      return Bad(err ? PrintableAscii(err, 300) : "a broken entry header");
    }
    if (staged.files.size() + staged.links.size() >= kMaxEntries)
      return Bad("it has more than " + std::to_string(kMaxEntries) + " entries");
    const char* raw = archive_entry_pathname(entry);
    std::string path;
    if (!raw || !CleanArchivePath(raw, path))
      return Bad("entry " + Quoted(raw ? raw : "") + " leaves the archive");
    if (path.empty()) continue;
    if (staged.files.count(path) || staged.links.count(path))
      return Bad("entry " + Quoted(path) + " appears twice");
    if (const char* hard = archive_entry_hardlink(entry)) {
      std::string target;
      if (!CleanArchivePath(hard, target) || target.empty())
        return Bad("hard link " + Quoted(path) + " points outside the archive");
      staged.links[path] = target;
      continue;
    }
    auto type = archive_entry_filetype(entry);
    if (type == AE_IFLNK) {
      std::string target = archive_entry_symlink(entry) ? archive_entry_symlink(entry) : "";
      std::string clean;
      if (!ResolveLink(path, target, clean))
        return Bad("symlink " + Quoted(path) + " points outside the archive");
      staged.links[path] = clean;
      continue;
    }
    if (type != AE_IFREG) continue;  // directories and the like carry nothing an image needs
    la_int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
    const uint64_t checked = std::min<uint64_t>(declared > 0 ? declared : 0, kRoomCheckBytes);
    if (room) RETURN_IF_ERROR(room(checked));
    uint64_t unchecked = checked;  // written beyond what the last check allowed for: none yet
    StagedFile file;
    file.path = dir + "/" + std::to_string(staged.files.size());
    std::ofstream out(file.path, std::ios::binary | std::ios::trunc);
    if (!out) return Internal("staging the image archive: cannot create " + file.path);
    Sha256 hash;
    while (true) {
      la_ssize_t n = archive_read_data(in.get(), buf.data(), buf.size());
      if (n == 0) break;
      if (n < 0) {
        const char* err = archive_error_string(in.get());
        return Bad(Quoted(path) + ": " + (err ? PrintableAscii(err, 300) : "truncated"));
      }
      // Each kRoomCheckBytes, room for the next: checked as the file grows, not only at its
      // start (a sparse or compressed entry writes far more than the upload brought).
      if (room && file.size + static_cast<uint64_t>(n) > unchecked) {
        RETURN_IF_ERROR(room(kRoomCheckBytes));
        unchecked = file.size + kRoomCheckBytes;
      }
      hash.Update(buf.data(), static_cast<size_t>(n));
      out.write(buf.data(), n);
      file.size += static_cast<uint64_t>(n);
      staged.bytes += static_cast<uint64_t>(n);
      if (staged.bytes > max_bytes)
        return Status(Code::kPayloadTooLarge,
                      "the image archive holds more than " + std::to_string(max_bytes >> 30) +
                          " GiB, over the 32 GiB image-build limit",
                      "archive");
    }
    out.close();
    if (!out) return Internal("staging the image archive: writing " + file.path + " failed");
    file.digest = hash.Digest();
    staged.files[path] = std::move(file);
  }
  return staged;
}

}  // namespace adapt::image
