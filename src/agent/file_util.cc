#include "agent/file_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include "base/text.h"

namespace adapt::agent {

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "adapt-agent: %s\n", message.c_str());
  return code;
}

int ExitForErrno(int err) {
  switch (err) {
    case ENOENT:
      return kExitNotFound;
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ELOOP:
    case EINVAL:
      return kExitBadTarget;
    case EACCES:
    case EPERM:
    case EROFS:
      return kExitDenied;
    case EEXIST:
    case ENOTEMPTY:
    case EBUSY:
      return kExitConflict;
    case ENOSPC:
    case EDQUOT:
      return kExitNoSpace;
    case EFBIG:
      return kExitTooLarge;
    default:
      return kExitFailed;
  }
}

int FailErrno(int err, const std::string& what, const std::string& path) {
  std::string reason = std::strerror(err);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(reason[0]));
  return Fail(ExitForErrno(err), what + " " + path + ": " + reason);
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (n == 1 && (c < 0x20 || c == '"' || c == '\\')) {
      char esc[8];
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else {
        std::snprintf(esc, sizeof esc, "\\u%04x", c);
        out += esc;
      }
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

const char* TypeName(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "dir";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

std::string StatJson(const std::string& name, const struct stat& st, const std::string& link) {
  char mode[8], mtime[32];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  struct tm tm {};
  time_t t = st.st_mtim.tv_sec;
  gmtime_r(&t, &tm);
  std::strftime(mtime, sizeof mtime, "%Y-%m-%dT%H:%M:%SZ", &tm);
  std::string out = "{\"name\":" + JsonString(name) + ",\"type\":\"" + TypeName(st.st_mode) +
                    "\",\"size\":" + std::to_string(st.st_size) + ",\"mode\":\"" + mode +
                    "\",\"mtime\":\"" + mtime + "\"";
  if (S_ISLNK(st.st_mode)) out += ",\"linkTarget\":" + JsonString(link);
  return out + "}";
}

bool WriteAllFd(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int OpenRegularFile(const std::string& path, int flags, struct stat* st, int* rc) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
  // A socket (or a device with nothing behind it) cannot be opened at all.
  if (fd < 0 && errno == ENXIO) {
    *rc = Fail(kExitBadTarget, path + " is not a regular file");
    return -1;
  }
  if (fd < 0) {
    *rc = FailErrno(errno, "cannot open", path);
    return -1;
  }
  const char* refusal = nullptr;
  if (::fstat(fd, st) != 0) {
    *rc = FailErrno(errno, "cannot stat", path);
  } else if (S_ISDIR(st->st_mode)) {
    refusal = " is a directory";
  } else if (!S_ISREG(st->st_mode)) {
    // A FIFO or a device could stream forever, or never.
    refusal = " is not a regular file";
  } else {
    int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0 && ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0) return fd;
    *rc = FailErrno(errno, "cannot read", path);
  }
  if (refusal) *rc = Fail(kExitBadTarget, path + refusal);
  ::close(fd);
  return -1;
}

std::string OpenedPath(int fd) {
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  std::string buf(PATH_MAX, '\0');
  ssize_t n = ::readlink(link.c_str(), buf.data(), buf.size());
  if (n <= 0 || static_cast<size_t>(n) >= buf.size()) return "";
  buf.resize(static_cast<size_t>(n));
  return buf;
}

}  // namespace adapt::agent
