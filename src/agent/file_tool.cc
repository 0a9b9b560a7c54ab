#include "agent/file_tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/file_util.h"
#include "base/hex.h"
#include "base/text.h"

namespace adapt::agent {
namespace {

constexpr size_t kCopyBuffer = 256 * 1024;
// /proc and /sys files are small; one that reads as more is refused rather than held.
constexpr size_t kMaxSizelessFileBytes = 4 << 20;

std::string ReadLinkText(const std::string& path) {
  std::vector<char> buf(4096);
  ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
  return n < 0 ? std::string() : std::string(buf.data(), static_cast<size_t>(n));
}

std::string BaseName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string DirName(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

// Copies `in` to `out` until end of input, or `limit` bytes. 0, or an errno with *reading
// telling which side.
int Copy(int in, int out, bool* reading, uint64_t limit = UINT64_MAX) {
  std::vector<char> buf(kCopyBuffer);
  for (;;) {
    if (limit == 0) return 0;
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), limit));
    ssize_t n = ::read(in, buf.data(), want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *reading = true;
      return errno;
    }
    if (n == 0) return 0;
    if (!WriteAllFd(out, buf.data(), static_cast<size_t>(n))) {
      *reading = false;
      return errno;
    }
    limit -= static_cast<uint64_t>(n);
  }
}

// The temp file of the upload in progress, for OnUploadAbandoned. adaptd ends an upload whose
// client went away with SIGTERM (SIGKILL only if that is ignored), its input still open so
// that nothing partial is ever renamed into place; the temp file goes with the tool.
char g_upload_temp[PATH_MAX];
volatile sig_atomic_t g_upload_temp_set = 0;

void OnUploadAbandoned(int) {
  if (g_upload_temp_set) ::unlink(g_upload_temp);
  ::_exit(kExitFailed);
}

void SetUploadSignals(bool block) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) sigaddset(&set, sig);
  ::sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

// mkstemp's template `tmp`, made with the abandon handlers in place and the name where the
// handler finds it (signals are held meanwhile, so no temp file exists unrecorded).
int MakeUploadTemp(const std::string& tmp) {
  if (tmp.size() >= sizeof(g_upload_temp)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  struct sigaction sa {};
  sa.sa_handler = OnUploadAbandoned;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) ::sigaction(sig, &sa, nullptr);
  SetUploadSignals(true);
  std::memcpy(g_upload_temp, tmp.c_str(), tmp.size() + 1);
  int fd = ::mkstemp(g_upload_temp);
  int err = errno;
  g_upload_temp_set = fd >= 0;
  SetUploadSignals(false);
  errno = err;
  return fd;
}

int Put(const std::string& path, const char* mode_text) {
  mode_t mode = 0644;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Fail(kExitBadTarget, path + " is a directory");
    // Replacing a FIFO, a socket or a device node with a file is never what an upload meant.
    if (!S_ISREG(st.st_mode))
      return Fail(kExitBadTarget, path + " is not a regular file; an upload replaces only files");
    mode = st.st_mode & 07777;
  }
  if (mode_text) {
    char* end = nullptr;
    unsigned long m = std::strtoul(mode_text, &end, 8);
    if (!*mode_text || *end || m > 07777) return Fail(kExitUsage, "--mode must be octal");
    mode = static_cast<mode_t>(m);
  }
  int fd = MakeUploadTemp(DirName(path) + "/." + BaseName(path) + ".adapt-XXXXXX");
  if (fd < 0) return FailErrno(errno, "cannot create a file beside", path);
  const std::string tmp = g_upload_temp;
  bool reading = false;
  int err = Copy(0, fd, &reading);
  if (err == 0 && ::fchmod(fd, mode) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err == 0) g_upload_temp_set = 0;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return FailErrno(err, reading ? "reading the upload for" : "writing", path);
  }
  return kExitOk;
}

// Reads all of `fd`, at most `limit` bytes: 0, or an errno; `*over` when more was there.
int ReadAtMost(int fd, size_t limit, std::string* out, bool* over) {
  std::vector<char> buf(kCopyBuffer);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    if (out->size() + static_cast<size_t>(n) > limit) {
      *over = true;
      return 0;
    }
    out->append(buf.data(), static_cast<size_t>(n));
  }
}

int Get(const std::string& path, bool header, bool opened_path) {
  struct stat st {};
  int rc = kExitOk;
  int fd = OpenRegularFile(path, 0, &st, &rc);
  if (fd < 0) return rc;
  // A file with no size on disk may still have content: /proc and /sys make theirs as it is
  // read. The header announces what is sent, so such a file is read first (bounded).
  std::string sizeless;
  if (header && st.st_size == 0) {
    bool over = false;
    int err = ReadAtMost(fd, kMaxSizelessFileBytes, &sizeless, &over);
    if (err != 0) {
      ::close(fd);
      return FailErrno(err, "reading", path);
    }
    if (over) {
      ::close(fd);
      return Fail(kExitTooLarge, path + " has no size on disk and reads as more than " +
                                     std::to_string(kMaxSizelessFileBytes >> 20) + " MiB");
    }
  }
  if (header) {
    std::string line = std::to_string(st.st_size == 0 ? sizeless.size() : st.st_size);
    // Which file this descriptor is, symlinks resolved, so that adaptd can judge the file
    // actually read rather than the name it asked for (core/object_artifacts.cc).
    if (opened_path) {
      std::string opened = OpenedPath(fd);
      if (opened.empty()) {
        ::close(fd);
        return Fail(kExitFailed, "cannot tell which file " + path + " opened");
      }
      line += " " + HexEncode(opened);
    }
    line += "\n";
    if (!WriteAllFd(1, line.data(), line.size())) return kExitFailed;
  }
  if (header && st.st_size == 0) {
    ::close(fd);
    return WriteAllFd(1, sizeless.data(), sizeless.size()) ? kExitOk : kExitFailed;
  }
  bool reading = false;
  // With the header, never more than announced: adaptd sends it as Content-Length.
  int err = Copy(fd, 1, &reading, header ? static_cast<uint64_t>(st.st_size) : UINT64_MAX);
  ::close(fd);
  if (err != 0) return FailErrno(err, reading ? "reading" : "sending", path);
  return kExitOk;
}

int Stat(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return FailErrno(errno, "cannot stat", path);
  std::string out =
      StatJson(BaseName(path), st, S_ISLNK(st.st_mode) ? ReadLinkText(path) : "") + "\n";
  return WriteAllFd(1, out.data(), out.size()) ? kExitOk : kExitFailed;
}

int List(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FailErrno(errno, "cannot stat", path);
  if (!S_ISDIR(st.st_mode)) {
    std::string out = "[" + StatJson(BaseName(path), st, "") + "]\n";
    return WriteAllFd(1, out.data(), out.size()) ? kExitOk : kExitFailed;
  }
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return FailErrno(errno, "cannot list", path);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  std::string out = "[";
  for (const auto& name : names) {
    std::string full = path + "/" + name;
    struct stat es {};
    if (::lstat(full.c_str(), &es) != 0) continue;  // removed meanwhile
    if (out.size() > 1) out += ",";
    out += StatJson(name, es, S_ISLNK(es.st_mode) ? ReadLinkText(full) : "");
  }
  out += "]\n";
  return WriteAllFd(1, out.data(), out.size()) ? kExitOk : kExitFailed;
}

// Removes the entries of the directory open as `fd`, never following symlinks.
int RemoveContents(int fd, const std::string& path) {
  DIR* dir = ::fdopendir(fd);
  if (!dir) return FailErrno(errno, "cannot list", path);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(dir)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  }
  int rc = kExitOk;
  for (const auto& name : names) {
    std::string full = path + "/" + name;
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    // An entry that goes away meanwhile (another process in the sandbox removed it) is what
    // was wanted: as `rm -rf`, it is no error.
    if (S_ISDIR(st.st_mode)) {
      int sub =
          ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (sub < 0 && errno == ENOENT) continue;
      if (sub < 0) return FailErrno(errno, "cannot open", full);
      rc = RemoveContents(sub, full);
      if (rc != kExitOk) break;
      if (::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        rc = FailErrno(errno, "cannot remove", full);
        break;
      }
    } else if (::unlinkat(fd, name.c_str(), 0) != 0 && errno != ENOENT) {
      rc = FailErrno(errno, "cannot remove", full);
      break;
    }
  }
  ::closedir(dir);
  return rc;
}

int Remove(const std::string& path, bool recursive) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return FailErrno(errno, "cannot remove", path);
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(path.c_str()) != 0) return FailErrno(errno, "cannot remove", path);
    return kExitOk;
  }
  if (BaseName(path) == "/" || path.find_first_not_of('/') == std::string::npos)
    return Fail(kExitBadTarget, "refusing to remove /");
  if (recursive) {
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return FailErrno(errno, "cannot open", path);
    int rc = RemoveContents(fd, path);
    if (rc != kExitOk) return rc;
  }
  if (::rmdir(path.c_str()) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST)
      return Fail(kExitConflict, "directory " + path + " is not empty; remove it recursively");
    return FailErrno(errno, "cannot remove", path);
  }
  return kExitOk;
}

int ReadText(const std::string& path, const char* max_text) {
  char* end = nullptr;
  unsigned long long max = std::strtoull(max_text, &end, 10);
  if (!*max_text || *end) return Fail(kExitUsage, "MAX must be a number of bytes");
  struct stat st {};
  int rc = kExitOk;
  int fd = OpenRegularFile(path, 0, &st, &rc);
  if (fd < 0) return rc;
  auto too_large = [&](unsigned long long size) {
    return Fail(kExitTooLarge, path + " is " + std::to_string(size) + " bytes, over the limit of " +
                                   std::to_string(max) + " bytes");
  };
  if (static_cast<unsigned long long>(st.st_size) > max) return too_large(st.st_size);
  std::string text;
  std::vector<char> buf(kCopyBuffer);
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return FailErrno(errno, "reading", path);
    if (n == 0) break;
    text.append(buf.data(), static_cast<size_t>(n));
    if (text.size() > max) return too_large(text.size());  // it grew meanwhile
  }
  ::close(fd);
  if (text.find('\0') != std::string::npos)
    return Fail(kExitNotText, path + " is a binary file (it contains NUL bytes), not text");
  if (!IsValidUtf8(text)) return Fail(kExitNotText, path + " is not valid UTF-8 text");
  return WriteAllFd(1, text.data(), text.size()) ? kExitOk : kExitFailed;
}

bool HasFlag(int argc, char** argv, const char* flag) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

const char* FlagValue(int argc, char** argv, const char* flag) {
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
  }
  return nullptr;
}

}  // namespace

int MakeDir(const std::string& path, bool parents) {
  if (!parents) {
    if (::mkdir(path.c_str(), 0755) != 0) return FailErrno(errno, "cannot create", path);
    return kExitOk;
  }
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    std::string prefix = path.substr(0, i);
    if (::mkdir(prefix.c_str(), 0755) == 0) continue;
    struct stat st {};
    if (errno == EEXIST && ::stat(prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    if (errno == EEXIST) return Fail(kExitConflict, prefix + " exists and is not a directory");
    return FailErrno(errno, "cannot create", prefix);
  }
  return kExitOk;
}

int RunFileTool(int argc, char** argv) {
  if (argc < 2) return Fail(kExitUsage, "usage: adapt-agent file <op> PATH [options]");
  std::string op = argv[0], path = argv[1];
  if (path.empty()) return Fail(kExitUsage, "the path is empty");
  if (op == "put") return Put(path, FlagValue(argc, argv, "--mode"));
  if (op == "get")
    return Get(path, HasFlag(argc, argv, "--header"), HasFlag(argc, argv, "--opened-path"));
  if (op == "list") return List(path);
  if (op == "stat") return Stat(path);
  if (op == "rm") return Remove(path, HasFlag(argc, argv, "--recursive"));
  if (op == "mkdir") return MakeDir(path, HasFlag(argc, argv, "--parents"));
  if (op == "archive-get") return ArchiveGet(path.c_str());
  if (op == "archive-put") return ArchivePut(path.c_str());
  if (op == "read-text" && argc >= 3) return ReadText(path, argv[2]);
  return Fail(kExitUsage, "unknown operation '" + op + "'");
}

}  // namespace adapt::agent
