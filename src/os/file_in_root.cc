#include "os/file_in_root.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "os/errno_status.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

constexpr uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

// openat2 of `rel` under `dir` (the root), `flags`, every component resolved inside it.
int OpenAt2InRoot(int dir, const std::string& rel, uint64_t flags, uint64_t resolve = kInRoot) {
  open_how how{};
  how.flags = flags;
  how.resolve = resolve;
  int fd;
  do {
    fd = static_cast<int>(::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof(how)));
  } while (fd < 0 && errno == EAGAIN);  // a rename raced the walk
  return fd;
}

// What `path` (not the root itself) names inside `root`, opened with `flags` and `resolve`;
// none when it does not resolve.
UniqueFd PathInRoot(const std::string& root, const std::string& path, uint64_t flags,
                    uint64_t resolve) {
  UniqueFd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::string rel = path;
  while (rel.starts_with("/")) rel.erase(0, 1);
  if (!dir || rel.empty()) return UniqueFd();
  return UniqueFd(OpenAt2InRoot(dir.get(), rel, flags, resolve));
}

}  // namespace

Result<UniqueFd> OpenRegularFileInRoot(const std::string& root, const std::string& path) {
  UniqueFd dir(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return ErrnoStatus("opening " + root);
  std::string rel = path;
  while (rel.starts_with("/")) rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  int fd = OpenAt2InRoot(dir.get(), rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  std::string what = path + " in " + root;
  if (fd < 0) {
    int err = errno;
    // A loop, or a path through a non-directory, names nothing.
    if (err == ENOENT || err == ENOTDIR || err == ELOOP || err == EXDEV)
      return Status(Code::kNotFound, what + " does not exist")
          .WithClientMessage(path + " does not exist");
    return ErrnoStatus("opening " + what, err);
  }
  UniqueFd file(fd);
  struct stat st;
  if (::fstat(file.get(), &st) != 0) return ErrnoStatus("inspecting " + what);
  if (!S_ISREG(st.st_mode))
    return Status(Code::kInvalidArgument, what + " is not a regular file")
        .WithClientMessage(path + " is not a regular file");
  return file;
}

Result<std::string> ReadFileInRoot(const std::string& root, const std::string& path,
                                   size_t max_bytes) {
  ASSIGN_OR_RETURN(UniqueFd file, OpenRegularFileInRoot(root, path));
  std::string what = path + " in " + root;
  auto too_big = [&] {
    std::string larger = " is larger than " + std::to_string(max_bytes) + " bytes";
    return Status(Code::kPayloadTooLarge, what + larger).WithClientMessage(path + larger);
  };
  struct stat st;
  if (::fstat(file.get(), &st) != 0) return ErrnoStatus("inspecting " + what);
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return too_big();
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(file.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("reading " + what);
    if (n == 0) break;
    // The file may grow after fstat: the bound holds for what is read, too.
    if (out.size() + static_cast<size_t>(n) > max_bytes) return too_big();
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RegularFileInRoot(const std::string& root, const std::string& path) {
  return OpenRegularFileInRoot(root, path).ok();
}

bool NonDirectoryInRoot(const std::string& root, const std::string& path) {
  UniqueFd fd = PathInRoot(root, path, O_PATH | O_CLOEXEC, kInRoot);
  struct stat st;
  return fd && ::fstat(fd.get(), &st) == 0 && !S_ISDIR(st.st_mode);
}

bool PlainDirectoryInRoot(const std::string& root, const std::string& path) {
  return static_cast<bool>(
      PathInRoot(root, path, O_PATH | O_DIRECTORY | O_CLOEXEC, kInRoot | RESOLVE_NO_SYMLINKS));
}

Status MakeDirsInRoot(const std::string& root, const std::string& path, int mode) {
  UniqueFd top(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!top) return ErrnoStatus("opening " + root);
  UniqueFd parent(::dup(top.get()));
  if (!parent) return ErrnoStatus("opening " + root);
  std::string walked;  // the components so far, relative to `root`
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string::npos) slash = path.size();
    std::string name = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (name.empty() || name == ".") continue;
    walked += (walked.empty() ? "" : "/") + name;
    std::string what = "/" + walked + " in " + root;
    constexpr uint64_t kDir = O_PATH | O_DIRECTORY | O_CLOEXEC;
    int fd = OpenAt2InRoot(top.get(), walked, kDir);
    if (fd < 0 && errno == ENOENT) {
      // `parent` is where the walk resolved the components before this one, inside root;
      // mkdirat makes `name` there and never follows a link that `name` already is.
      if (::mkdirat(parent.get(), name.c_str(), static_cast<mode_t>(mode)) == 0) {
        UniqueFd made(
            ::openat(parent.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (made) ::fchmod(made.get(), static_cast<mode_t>(mode));  // past the umask
      } else if (errno != EEXIST) {
        return ErrnoStatus("creating " + what);
      }
      fd = OpenAt2InRoot(top.get(), walked, kDir);
    }
    if (fd < 0) {
      int err = errno;
      if (err == ENOENT || err == ENOTDIR || err == ELOOP || err == EXDEV)
        return Status(Code::kInvalidArgument, what + " exists and is not a directory")
            .WithClientMessage("/" + walked + " exists and is not a directory");
      return ErrnoStatus("opening " + what, err);
    }
    parent = UniqueFd(fd);
  }
  return Status::Ok();
}

}  // namespace adapt::os
