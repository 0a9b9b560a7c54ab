// archive-get and archive-put: tar streams of a file or a directory tree. Extraction never
// writes outside its target directory: names are cleaned (no absolute names, no ".."),
// links must point inside, and directories are walked with O_NOFOLLOW so a symlink already
// in the tree cannot redirect a write.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "agent/file_tool.h"
#include "agent/file_util.h"
#include "agent/tar_format.h"

namespace adapt::agent {
namespace {

constexpr size_t kBuffer = 256 * 1024;

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

bool Emit(const std::string& s) { return WriteAllFd(1, s.data(), s.size()); }

// Sends exactly `size` bytes of the file at `fd` (zeros when it shrank meanwhile).
int EmitData(int fd, uint64_t size, const std::string& path) {
  std::vector<char> buf(kBuffer);
  uint64_t left = size;
  while (left > 0) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, buf.size()));
    ssize_t n = ::read(fd, buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FailErrno(errno, "reading", path);
    if (n == 0) {
      std::fill(buf.begin(), buf.begin() + static_cast<long>(want), '\0');
      n = static_cast<ssize_t>(want);
    }
    if (!WriteAllFd(1, buf.data(), static_cast<size_t>(n))) return kExitFailed;
    left -= static_cast<uint64_t>(n);
  }
  return Emit(std::string(TarPadding(size), '\0')) ? kExitOk : kExitFailed;
}

TarEntry EntryFor(const std::string& name, const struct stat& st) {
  TarEntry e;
  e.name = name;
  e.mode = st.st_mode & 07777;
  e.mtime = st.st_mtim.tv_sec;
  return e;
}

int EmitFile(const std::string& path, const std::string& name) {
  // The lstat that chose this entry is no promise: it may be a FIFO by now.
  struct stat st {};
  int rc = kExitOk;
  int raw = OpenRegularFile(path, O_NOFOLLOW, &st, &rc);
  if (raw < 0) return rc;
  UniqueFd fd(raw);
  TarEntry e = EntryFor(name, st);
  e.size = static_cast<uint64_t>(st.st_size);
  if (!Emit(EncodeTarHeader(e))) return kExitFailed;
  return EmitData(fd.get(), e.size, path);
}

int EmitTree(const std::string& dir, const std::string& prefix) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return FailErrno(errno, "cannot list", dir);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string path = dir + "/" + n, name = prefix + n;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) continue;  // removed meanwhile
    int rc = kExitOk;
    if (S_ISREG(st.st_mode)) {
      rc = EmitFile(path, name);
    } else if (S_ISDIR(st.st_mode)) {
      TarEntry e = EntryFor(name + "/", st);
      e.type = TarEntry::kDirectory;
      if (!Emit(EncodeTarHeader(e))) return kExitFailed;
      rc = EmitTree(path, name + "/");
    } else if (S_ISLNK(st.st_mode)) {
      std::vector<char> buf(4096);
      ssize_t len = ::readlink(path.c_str(), buf.data(), buf.size());
      if (len < 0) continue;
      TarEntry e = EntryFor(name, st);
      e.type = TarEntry::kSymlink;
      e.link.assign(buf.data(), static_cast<size_t>(len));
      if (!Emit(EncodeTarHeader(e))) return kExitFailed;
    }  // devices, FIFOs and sockets are left out
    if (rc != kExitOk) return rc;
  }
  return kExitOk;
}

int Unsafe(const std::string& name, const std::string& why) {
  return Fail(kExitUnsafeArchive, "archive entry '" + name + "' is refused: it " + why);
}

// Opens (creating as needed) the directory that holds `components`' last element, below
// `root`, refusing to pass through symlinks. Returns the fd or -1 after printing why.
int OpenParent(int root, const std::vector<std::string>& components, const std::string& name,
               int* rc) {
  int fd = ::dup(root);
  for (size_t i = 0; i + 1 < components.size(); ++i) {
    const char* c = components[i].c_str();
    if (::mkdirat(fd, c, 0755) != 0 && errno != EEXIST) {
      *rc = FailErrno(errno, "cannot create a directory for", name);
      ::close(fd);
      return -1;
    }
    // O_NOFOLLOW alone is not enough: this gVisor follows a symlink with O_DIRECTORY.
    struct stat st {};
    if (::fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
      ::close(fd);
      *rc = Unsafe(name, "passes through a symlink or a file");
      return -1;
    }
    int next = ::openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    ::close(fd);
    if (next < 0) {
      *rc = (errno == ELOOP || errno == ENOTDIR)
                ? Unsafe(name, "passes through a symlink or a file")
                : FailErrno(errno, "cannot open a directory for", name);
      return -1;
    }
    fd = next;
  }
  return fd;
}

std::vector<std::string> Components(const std::string& clean) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < clean.size()) {
    size_t slash = clean.find('/', start);
    if (slash == std::string::npos) slash = clean.size();
    out.push_back(clean.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// Removes what stands at `leaf` unless it is a directory, so the new entry replaces it.
void ClearLeaf(int dir, const char* leaf) {
  struct stat st {};
  if (::fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
    ::unlinkat(dir, leaf, 0);
}

int ExtractFile(TarReader& reader, int dir, const char* leaf, const TarEntry& e,
                const std::string& name) {
  ClearLeaf(dir, leaf);
  int raw = ::openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (raw < 0) return FailErrno(errno, "cannot create", name);
  UniqueFd fd(raw);
  std::vector<char> buf(kBuffer);
  for (;;) {
    long n = reader.ReadData(buf.data(), buf.size());
    if (n < 0) return Fail(kExitBadTarget, "malformed archive: " + reader.error());
    if (n == 0) break;
    if (!WriteAllFd(fd.get(), buf.data(), static_cast<size_t>(n)))
      return FailErrno(errno, "writing", name);
  }
  ::fchmod(fd.get(), e.mode & 07777);
  struct timespec times[2] = {{e.mtime, 0}, {e.mtime, 0}};
  ::futimens(fd.get(), times);
  return kExitOk;
}

int ExtractEntry(TarReader& reader, int root, const TarEntry& e) {
  std::string why;
  std::string clean = CleanArchiveName(e.name, why);
  if (!why.empty()) return Unsafe(e.name, why);
  if (clean.empty()) return kExitOk;  // the root itself
  auto components = Components(clean);
  int rc = kExitOk;
  int raw = OpenParent(root, components, clean, &rc);
  if (raw < 0) return rc;
  UniqueFd dir(raw);
  const char* leaf = components.back().c_str();
  switch (e.type) {
    case TarEntry::kFile:
      return ExtractFile(reader, dir.get(), leaf, e, clean);
    case TarEntry::kDirectory: {
      if (::mkdirat(dir.get(), leaf, (e.mode & 07777) | 0700) != 0 && errno != EEXIST)
        return FailErrno(errno, "cannot create", clean);
      struct stat st {};
      if (::fstatat(dir.get(), leaf, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        return Fail(kExitConflict, clean + " exists and is not a directory");
      return kExitOk;
    }
    case TarEntry::kSymlink:
      if (!SymlinkStaysInside(clean, e.link))
        return Unsafe(e.name, "is a symlink pointing outside the target (" + e.link + ")");
      ClearLeaf(dir.get(), leaf);
      if (::symlinkat(e.link.c_str(), dir.get(), leaf) != 0)
        return FailErrno(errno, "cannot create", clean);
      return kExitOk;
    case TarEntry::kHardLink: {
      std::string target = CleanArchiveName(e.link, why);
      if (!why.empty() || target.empty())
        return Unsafe(e.name, "is a hard link to a file outside the target");
      ClearLeaf(dir.get(), leaf);
      if (::linkat(root, target.c_str(), dir.get(), leaf, 0) != 0)
        return FailErrno(errno, "cannot link", clean);
      return kExitOk;
    }
    default:
      return kExitOk;  // devices and FIFOs are not created
  }
}

}  // namespace

int ArchiveGet(const char* path) {
  struct stat st {};
  if (::stat(path, &st) != 0) return FailErrno(errno, "cannot stat", path);
  int rc;
  if (S_ISDIR(st.st_mode)) {
    rc = EmitTree(path, "");
  } else if (S_ISREG(st.st_mode)) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    rc = EmitFile(p, p.substr(p.rfind('/') == std::string::npos ? 0 : p.rfind('/') + 1));
  } else {
    return Fail(kExitBadTarget, std::string(path) + " is neither a file nor a directory");
  }
  if (rc != kExitOk) return rc;
  return Emit(TarTrailer()) ? kExitOk : kExitFailed;
}

int ArchivePutFrom(const char* path, const std::function<long(char*, size_t)>& read) {
  if (int rc = MakeDir(path, true); rc != kExitOk) return rc;
  int raw = ::open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) return FailErrno(errno, "cannot open", path);
  UniqueFd root(raw);
  TarReader reader(read);
  for (;;) {
    TarEntry e;
    int r = reader.Next(e);
    if (r < 0) return Fail(kExitBadTarget, "malformed archive: " + reader.error());
    if (r == 0) break;
    if (int rc = ExtractEntry(reader, root.get(), e); rc != kExitOk) return rc;
  }
  return kExitOk;
}

int ArchivePut(const char* path) {
  int rc = ArchivePutFrom(path, [](char* buf, size_t n) -> long {
    for (;;) {
      ssize_t got = ::read(0, buf, n);
      if (got < 0 && errno == EINTR) continue;
      return static_cast<long>(got);
    }
  });
  if (rc != kExitOk) return rc;
  // Whatever follows the end of the archive is drained, so the sender never sees EPIPE.
  char buf[8192];
  while (::read(0, buf, sizeof buf) > 0) {
  }
  return kExitOk;
}

}  // namespace adapt::agent
