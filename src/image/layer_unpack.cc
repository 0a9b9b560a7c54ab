#include "image/layer_unpack.h"

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "image/archive_staging.h"
#include "image/digest.h"
#include "os/files.h"

namespace adapt::image {
namespace {

constexpr const char* kWhiteoutPrefix = ".wh.";
constexpr const char* kOpaqueMarker = ".wh..wh..opq";

struct ReadDeleter {
  void operator()(archive* a) const { archive_read_free(a); }
};
struct WriteDeleter {
  void operator()(archive* a) const { archive_write_free(a); }
};

}  // namespace

Status UnpackLayer(const std::string& archive_path, const std::string& dir, uint64_t max_bytes,
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
    return bad(archive_error_string(in.get()) ? archive_error_string(in.get()) : "unreadable");

  std::vector<std::string> whiteouts, opaque_dirs;
  uint64_t total = 0;
  archive_entry* entry = nullptr;
  while (true) {
    int r = archive_read_next_header(in.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return bad(archive_error_string(in.get()));
    const char* name = archive_entry_pathname(entry);
    std::string path;
    if (!name || !CleanArchivePath(name, path))
      return bad("entry '" + std::string(name ? name : "") + "' escapes the layer");
    if (path.empty()) continue;  // the root's own entry: overlay decides the root's metadata
    auto slash = path.rfind('/');
    std::string parent = slash == std::string::npos ? "" : path.substr(0, slash);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    if (base == kOpaqueMarker) {
      opaque_dirs.push_back(parent);
      continue;
    }
    if (base.starts_with(kWhiteoutPrefix)) {
      std::string target = base.substr(std::string(kWhiteoutPrefix).size());
      if (target.empty() || target == "." || target == "..")
        return bad("bad whiteout '" + path + "'");
      whiteouts.push_back((parent.empty() ? "" : parent + "/") + target);
      continue;
    }
    if (const char* link = archive_entry_hardlink(entry)) {
      std::string target;
      if (!CleanArchivePath(link, target) || target.empty())
        return bad("hard link '" + path + "' points outside the layer");
      archive_entry_set_hardlink(entry, (root + "/" + target).c_str());
    }
    // Symlink targets are left as written: they are resolved inside the sandbox, whose root
    // is the overlay, so an absolute target cannot reach the host.
    archive_entry_set_pathname(entry, (root + "/" + path).c_str());
    if (archive_entry_size_is_set(entry)) total += static_cast<uint64_t>(archive_entry_size(entry));
    if (total > max_bytes) return bad("it unpacks to more than the 32 GiB image-build limit");
    r = archive_write_header(out.get(), entry);
    if (r < ARCHIVE_WARN) return bad("'" + path + "': " + archive_error_string(out.get()));
    if (archive_entry_size(entry) > 0 && r >= ARCHIVE_WARN) {
      const void* buf;
      size_t size;
      la_int64_t offset;
      while ((r = archive_read_data_block(in.get(), &buf, &size, &offset)) == ARCHIVE_OK) {
        if (archive_write_data_block(out.get(), buf, size, offset) < ARCHIVE_WARN)
          return bad("'" + path + "': " + archive_error_string(out.get()));
      }
      if (r != ARCHIVE_EOF) return bad("'" + path + "': " + archive_error_string(in.get()));
    }
    if (archive_write_finish_entry(out.get()) < ARCHIVE_WARN)
      return bad("'" + path + "': " + archive_error_string(out.get()));
  }
  if (archive_write_close(out.get()) < ARCHIVE_WARN) return bad(archive_error_string(out.get()));

  // Whiteouts and opaque markers after all entries, so a directory entry written later does
  // not replace them; their parents are checked for symlinks like any other entry.
  auto parent_ok = [&](const std::string& rel) {
    std::string p = root;
    size_t i = 0;
    while (true) {
      auto end = rel.find('/', i);
      if (end == std::string::npos) return true;
      p += '/';
      p.append(rel, i, end - i);
      if (std::filesystem::is_symlink(p, ec)) return false;
      i = end + 1;
    }
  };
  for (const auto& d : opaque_dirs) {
    if (!parent_ok(d + "/x")) return bad("opaque marker in '" + d + "' goes through a symlink");
    std::string full = d.empty() ? root : root + "/" + d;
    RETURN_IF_ERROR(os::MakeDirs(full, 0755));
    RETURN_IF_ERROR(os::SetXattr(full, "trusted.overlay.opaque", "y"));
  }
  for (const auto& w : whiteouts) {
    if (!parent_ok(w)) return bad("whiteout '" + w + "' goes through a symlink");
    std::string full = root + "/" + w;
    auto slash = full.rfind('/');
    RETURN_IF_ERROR(os::MakeDirs(full.substr(0, slash), 0755));
    if (std::filesystem::symlink_status(full, ec).type() != std::filesystem::file_type::not_found)
      return bad("whiteout '" + w + "' names an entry the same layer adds");
    RETURN_IF_ERROR(os::MakeWhiteout(full));
  }
  return Status::Ok();
}

Result<std::string> UncompressedDigest(const std::string& archive_path, const std::string& what) {
  std::unique_ptr<archive, ReadDeleter> in(archive_read_new());
  archive_read_support_filter_gzip(in.get());
  archive_read_support_filter_zstd(in.get());
  // "raw": the decompressed bytes as one entry, whatever they hold.
  archive_read_support_format_raw(in.get());
  auto bad = [&](const std::string& why) {
    return InvalidArgument("image", what + " cannot be read: " + why);
  };
  if (archive_read_open_filename(in.get(), archive_path.c_str(), 1 << 16) != ARCHIVE_OK)
    return bad(archive_error_string(in.get()) ? archive_error_string(in.get()) : "unreadable");
  Sha256 hash;
  archive_entry* entry = nullptr;
  int r = archive_read_next_header(in.get(), &entry);
  if (r == ARCHIVE_EOF) return hash.Digest();  // an empty file
  if (r != ARCHIVE_OK)
    return bad(archive_error_string(in.get()) ? archive_error_string(in.get()) : "bad header");
  std::vector<char> buf(1 << 16);
  while (true) {
    la_ssize_t n = archive_read_data(in.get(), buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0)
      return bad(archive_error_string(in.get()) ? archive_error_string(in.get()) : "bad data");
    hash.Update(buf.data(), static_cast<size_t>(n));
  }
  return hash.Digest();
}

}  // namespace adapt::image
