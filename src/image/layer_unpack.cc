#include "image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "base/text.h"
#include "image/archive_staging.h"
#include "image/digest.h"
#include "os/files.h"

namespace adapt::image {
namespace {

constexpr const char* kWhiteoutPrefix = ".wh.";
constexpr const char* kOpaqueMarker = ".wh..wh..opq";
constexpr const char* kOverLimit =
    "it takes the image's unpacked layers past the 32 GiB image-build limit";

struct ReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};

// libarchive's last error, or `otherwise` when it has none (archive_error_string may be
// null). Its messages quote entry names, the layer's own text: made printable here.
std::string ErrorOf(archive* a, const char* otherwise) {
  const char* e = archive_error_string(a);
  return e ? PrintableAscii(e, 300) : otherwise;
}

// An entry name in an error: the registry chose it.
std::string Quoted(const std::string& name) { return "'" + PrintableAscii(name) + "'"; }

// Bytes of the uncompressed tar read so far (headers and data, skipped entries' too).
uint64_t StreamBytes(archive* in) {
  la_int64_t n = archive_filter_bytes(in, 0);
  return n < 0 ? 0 : static_cast<uint64_t>(n);
}

// Whether the host should see xattr `name` on an unpacked file. trusted.* is what the
// host's overlayfs reads from a lower layer (trusted.overlay.redirect, .metacopy, .opaque:
// adaptd sets the opaque one itself from OCI markers) and what only root may set; security.*
// holds the host's LSM labels and integrity data. security.capability stays: file
// capabilities belong to the image, like the setuid bits that are kept too.
bool KeptXattr(std::string_view name) {
  if (name == "security.capability") return true;
  return !name.starts_with("trusted.") && !name.starts_with("security.");
}

void DropHostXattrs(archive_entry* entry) {
  std::vector<std::pair<std::string, std::string>> kept;
  bool dropped = false;
  const char* name = nullptr;
  const void* value = nullptr;
  size_t size = 0;
  archive_entry_xattr_reset(entry);
  while (archive_entry_xattr_next(entry, &name, &value, &size) == ARCHIVE_OK) {
    if (!name || !KeptXattr(name)) {
      dropped = true;
      continue;
    }
    kept.emplace_back(name, value ? std::string(static_cast<const char*>(value), size) : "");
  }
  if (!dropped) return;
  archive_entry_xattr_clear(entry);
  for (const auto& [n, v] : kept)
    archive_entry_xattr_add_entry(entry, n.c_str(), v.data(), v.size());
}

// A block device, or a character device other than 0/0 (an overlay whiteout, as layers saved
// from an overlay carry them): on the host it would open the host's disks and terminals to
// whoever reaches the store, and nothing in a sandbox needs one from its image.
bool IsDeviceNode(archive_entry* entry) {
  auto type = archive_entry_filetype(entry);
  return type == AE_IFBLK || (type == AE_IFCHR && archive_entry_rdev(entry) != 0);
}

}  // namespace

Status UnpackLayer(const std::string& archive_path, const std::string& dir, UnpackBudget& budget,
                   const std::string& what) {
  std::error_code ec;
  // libarchive's symlink checks walk the whole path, so it must be free of links itself.
  std::string root = std::filesystem::canonical(dir, ec).string();
  if (ec) return Internal("resolving " + dir + ": " + ec.message());

  std::unique_ptr<archive, ReadDeleter> in(archive_read_new());
  archive_read_support_filter_gzip(in.get());
  archive_read_support_filter_zstd(in.get());
  archive_read_support_format_tar(in.get());
  std::unique_ptr<archive, WriteDeleter> out(archive_write_disk_new());
  // No ARCHIVE_EXTRACT_FFLAGS (an immutable file could not be collected) and xattrs filtered
  // per entry (DropHostXattrs).
  archive_write_disk_set_options(
      out.get(), ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME |
                     ARCHIVE_EXTRACT_XATTR | ARCHIVE_EXTRACT_ACL | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                     ARCHIVE_EXTRACT_SECURE_NODOTDOT);
  // Owners are numeric: the host's user database says nothing about the image's.
  archive_write_disk_set_standard_lookup(out.get());
  archive_write_disk_set_user_lookup(out.get(), nullptr, nullptr, nullptr);
  archive_write_disk_set_group_lookup(out.get(), nullptr, nullptr, nullptr);

  auto bad = [&](const std::string& why) {
    return InvalidArgument("image", what + " cannot be unpacked: " + why);
  };
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK)
    return bad(ErrorOf(in.get(), "unreadable"));

  const uint64_t limit = budget.bytes_left;
  std::vector<std::string> whiteouts, opaque_dirs;
  uint64_t entries = 0, deferred_bytes = 0;
  archive_entry* entry = nullptr;
  while (true) {
    int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return bad(ErrorOf(in.get(), "a broken entry header"));
    if (++entries > budget.max_layer_entries)
      return bad("it has more than " + std::to_string(budget.max_layer_entries) + " entries");
    // Where this entry ends in the uncompressed stream: its data is decompressed even when the
    // entry is skipped, so every entry counts, and it is refused before any of it is read.
    la_int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
    uint64_t size = declared > 0 ? static_cast<uint64_t>(declared) : 0;
    if (StreamBytes(in.get()) > limit || size > limit - StreamBytes(in.get()))
      return bad(kOverLimit);
    const char* name = archive_entry_pathname(entry);
    std::string path;
    if (!name || !CleanArchivePath(name, path))
      return bad("entry " + Quoted(name ? name : "") + " escapes the layer");
    if (path.empty()) continue;  // the root's own entry: overlay decides the root's metadata
    auto slash = path.rfind('/');
    std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base == kOpaqueMarker || base.starts_with(kWhiteoutPrefix)) {
      deferred_bytes += path.size();
      if (deferred_bytes > budget.max_whiteout_name_bytes)
        return bad("its whiteouts name more than " +
                   std::to_string(budget.max_whiteout_name_bytes) + " bytes of paths");
    }
    if (base == kOpaqueMarker) {
      opaque_dirs.push_back(parent);
      continue;
    }
    if (base.starts_with(kWhiteoutPrefix)) {
      std::string target = base.substr(std::string(kWhiteoutPrefix).size());
      if (target.empty() || target == "." || target == "..")
        return bad("bad whiteout " + Quoted(path));
      whiteouts.push_back((parent.empty() ? "" : parent + "/") + target);
      continue;
    }
    if (const char* link = archive_entry_hardlink(entry)) {
      std::string target;
      if (!CleanArchivePath(link, target) || target.empty())
        return bad("hard link " + Quoted(path) + " points outside the layer");
      archive_entry_set_hardlink(entry, (root + "/" + target).c_str());
    } else if (IsDeviceNode(entry)) {
      return bad("device node " + Quoted(path) +
                 " is not allowed (a layer may hold only the 0/0 character device of a whiteout)");
    }
    if (budget.room) RETURN_IF_ERROR(budget.room(size));
    DropHostXattrs(entry);
    // Symlink targets are left as written: they are resolved inside the sandbox, whose root
    // is the overlay, so an absolute target cannot reach the host.
    archive_entry_set_pathname(entry, (root + "/" + path).c_str());
    r = archive_write_header(out.get(), entry);
    if (r < ARCHIVE_WARN) return bad(Quoted(path) + ": " + ErrorOf(out.get(), "not written"));
    if (archive_entry_size(entry) > 0) {
      const void* buf;
      size_t n;
      la_int64_t offset;
      while ((r = archive_read_data_block(in.get(), &buf, &n, &offset)) == ARCHIVE_OK) {
        if (archive_write_data_block(out.get(), buf, n, offset) < ARCHIVE_WARN)
          return bad(Quoted(path) + ": " + ErrorOf(out.get(), "not written"));
      }
      if (r != ARCHIVE_EOF) return bad(Quoted(path) + ": " + ErrorOf(in.get(), "truncated"));
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN)
      return bad(Quoted(path) + ": " + ErrorOf(out.get(), "not written"));
  }
  if (archive_write_close(out.get()) < ARCHIVE_WARN) return bad(ErrorOf(out.get(), "not written"));
  // Headers and the end-of-archive blocks are counted here (a pax header can be large).
  uint64_t used = StreamBytes(in.get());
  if (used > limit) return bad(kOverLimit);

  // Whiteouts and opaque markers after all entries, so a directory entry written later does
  // not replace them; their parents are checked for symlinks like any other entry.
  auto parent_ok = [&](const std::string& rel) {
    std::string p = root;
    size_t i = 0;
    while (true) {
      auto end = rel.find('/', i);
      if (end == std::string::npos) return true;
      // Appended piece by piece: GCC 12 sees a false -Werror=restrict in "/" + substr().
      p += '/';
      p.append(rel, i, end - i);
      if (std::filesystem::is_symlink(p, ec)) return false;
      i = end + 1;
    }
  };
  for (const auto& d : opaque_dirs) {
    if (!parent_ok(d + "/x"))
      return bad("opaque marker in " + Quoted(d) + " goes through a symlink");
    std::string full = d.empty() ? root : root + "/" + d;
    RETURN_IF_ERROR(os::MakeDirs(full, 0755));
    RETURN_IF_ERROR(os::SetXattr(full, "trusted.overlay.opaque", "y"));
  }
  for (const auto& w : whiteouts) {
    if (!parent_ok(w)) return bad("whiteout " + Quoted(w) + " goes through a symlink");
    std::string full = root + "/" + w;
    auto slash = full.rfind('/');
    RETURN_IF_ERROR(os::MakeDirs(full.substr(0, slash), 0755));
    if (std::filesystem::symlink_status(full, ec).type() != std::filesystem::file_type::not_found)
      return bad("whiteout " + Quoted(w) + " names an entry the same layer adds");
    RETURN_IF_ERROR(os::MakeWhiteout(full));
  }
  budget.bytes_left = limit - used;
  return Status::Ok();
}

Result<std::string> UncompressedDigest(const std::string& archive_path, uint64_t max_bytes,
                                       const std::string& what, uint64_t* hashed) {
  std::unique_ptr<archive, ReadDeleter> in(archive_read_new());
  archive_read_support_filter_gzip(in.get());
  archive_read_support_filter_zstd(in.get());
  // "raw": the decompressed bytes as one entry, whatever they hold.
  archive_read_support_format_raw(in.get());
  auto bad = [&](const std::string& why) {
    return InvalidArgument("image", what + " cannot be read: " + why);
  };
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK)
    return bad(ErrorOf(in.get(), "unreadable"));
  Sha256 hash;
  archive_entry* entry = nullptr;
  int r = archive_read_next_header(in.get(), &entry);
  if (r == ARCHIVE_EOF) return hash.Digest();  // an empty file
  if (r != ARCHIVE_OK) return bad(ErrorOf(in.get(), "bad header"));
  std::vector<char> buf(1 << 16);
  uint64_t total = 0;
  while (true) {
    la_ssize_t n = archive_read_data(in.get(), buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0) return bad(ErrorOf(in.get(), "bad data"));
    total += static_cast<uint64_t>(n);
    if (total > max_bytes) return bad(kOverLimit);
    hash.Update(buf.data(), static_cast<size_t>(n));
  }
  if (hashed) *hashed = total;
  return hash.Digest();
}

}  // namespace adapt::image
