#include "core/storage_files.h"

#include <algorithm>

#include "base/text.h"
#include "os/durable_file.h"
#include "os/file_in_root.h"
#include "storage/volume_request.h"

namespace adapt::core {
namespace {

// Reads an open regular file of a volume up to the size it had when opened: a file growing
// meanwhile does not make the body longer than its announced length.
class VolumeFileReader : public FileReader {
 public:
  explicit VolumeFileReader(std::unique_ptr<os::FileReader> file) : file_(std::move(file)) {}

  std::optional<uint64_t> size() const override { return file_->size(); }
  long Read(char* buf, size_t n) override {
    uint64_t left = file_->size() - read_;
    if (left == 0) return 0;
    long got = file_->Read(buf, static_cast<size_t>(std::min<uint64_t>(n, left)));
    if (got > 0) read_ += static_cast<uint64_t>(got);
    return got;
  }
  // A file that shrank while it was read leaves a short body, which the client sees as broken.
  Status Finish() override { return Status::Ok(); }
  const char* served_by() const override { return "storage"; }
  const std::string& opened_path() const override { return opened_path_; }

 private:
  std::unique_ptr<os::FileReader> file_;
  uint64_t read_ = 0;
  std::string opened_path_;
};

// The path as the client knows it (what sandboxes see), for messages.
std::string Shown(const std::string& path) { return path[0] == '/' ? path : "/workspace/" + path; }

}  // namespace

Result<std::string> PathInWorkspace(const std::string& path, const std::string& field) {
  RETURN_IF_ERROR(ValidateFilePath(path, field));
  if (path[0] != '/') return path;
  constexpr std::string_view kWorkspace = "/workspace";
  if (path.starts_with(kWorkspace) &&
      (path.size() == kWorkspace.size() || path[kWorkspace.size()] == '/'))
    return path.size() == kWorkspace.size() ? std::string(".") : path.substr(kWorkspace.size());
  return InvalidArgument(field, field + " must be relative to /workspace or inside it: " +
                                    "persistent storage holds /workspace only");
}

Result<std::unique_ptr<FileReader>> StorageFiles::Open(const Principal& who,
                                                       const std::string& name,
                                                       const std::string& path) const {
  ASSIGN_OR_RETURN(std::string rel, PathInWorkspace(path));
  if (!storage::ValidateVolumeName(name).ok()) return NotFound("storage '" + name + "' not found");
  ASSIGN_OR_RETURN(std::string root, workspace_of_(who.org_id, name));
  const std::string shown = Shown(path);
  auto fd = os::OpenRegularFileInRoot(root, rel);
  if (!fd.ok()) {
    if (fd.status().code() == Code::kNotFound)
      return NotFound(shown + " does not exist in storage '" + name + "'");
    if (fd.status().code() == Code::kInvalidArgument)
      return InvalidArgument("path", shown + " is not a regular file");
    return fd.status();  // the OS layer's client sentence, its message logged
  }
  ASSIGN_OR_RETURN(std::unique_ptr<os::FileReader> file,
                   os::FileReader::FromFd(std::move(*fd), shown + " in " + root));
  return std::unique_ptr<FileReader>(std::make_unique<VolumeFileReader>(std::move(file)));
}

Result<std::string> StorageFiles::ReadText(const Principal& who, const std::string& name,
                                           const std::string& path, size_t max_bytes) const {
  ASSIGN_OR_RETURN(std::unique_ptr<FileReader> reader, Open(who, name, path));
  const std::string shown = Shown(path);
  if (*reader->size() > max_bytes)
    return Status(Code::kPayloadTooLarge, shown + " is " + std::to_string(*reader->size()) +
                                              " bytes, over the limit of " +
                                              std::to_string(max_bytes) + " bytes");
  std::string text(*reader->size(), '\0');
  size_t got = 0;
  while (got < text.size()) {
    long n = reader->Read(text.data() + got, text.size() - got);
    if (n < 0) return Internal("reading " + shown + " of storage '" + name + "' failed");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  if (text.find('\0') != std::string::npos)
    return InvalidArgument("path", shown + " is a binary file (it contains NUL bytes), not text");
  if (!IsValidUtf8(text)) return InvalidArgument("path", shown + " is not valid UTF-8 text");
  return text;
}

}  // namespace adapt::core
