// What the agent's file operations share: exit codes (the contract with adaptd), error
// reporting, JSON text and UTF-8 checks.
#pragma once

#include <sys/stat.h>

#include <string>
#include <string_view>

namespace adapt::agent {

// Exit codes of `adapt-agent file`; adaptd maps them to API errors (core/file_service.cc).
enum FileExit : int {
  kExitOk = 0,
  kExitFailed = 1,         // any other failure: 500
  kExitUsage = 2,          // adaptd called the agent wrongly: 500
  kExitNotFound = 3,       // 404
  kExitBadTarget = 4,      // is a directory, not a directory, not a regular file: 400
  kExitDenied = 5,         // 403
  kExitConflict = 6,       // exists, directory not empty: 409
  kExitTooLarge = 7,       // over the caller's size limit: 413
  kExitNotText = 8,        // binary or invalid UTF-8: 400
  kExitUnsafeArchive = 9,  // an archive entry would land outside the target: 400
  kExitNoSpace = 10,       // the sandbox's disk is full: 507
};

// Prints "adapt-agent: <message>" on stderr and returns `code`.
int Fail(int code, const std::string& message);
// The exit code for an errno value, and a failure line "<what> <path>: <strerror>".
int ExitForErrno(int err);
int FailErrno(int err, const std::string& what, const std::string& path);

// A JSON string literal; invalid UTF-8 bytes become U+FFFD.
std::string JsonString(std::string_view s);

// {"name":..,"type":..,"size":..,"mode":"0644","mtime":"RFC 3339"} for an lstat result.
std::string StatJson(const std::string& name, const struct stat& st, const std::string& link);
const char* TypeName(mode_t mode);

// Writes all of `data` to `fd`; false on error (errno set).
bool WriteAllFd(int fd, const char* data, size_t n);

// Opens `path` (with `flags` added to O_RDONLY) for reading a regular file, and fills `st`.
// The open never blocks: it is non-blocking until fstat has shown a regular file (a FIFO
// with no writer would otherwise hang the operation forever), and blocking again after, for
// the read. A directory, a FIFO, a socket or a device is refused (kExitBadTarget) without a
// byte read. Returns the fd, or -1 with *rc set after printing why.
int OpenRegularFile(const std::string& path, int flags, struct stat* st, int* rc);

// The path this process's kernel gives the file open as `fd` (/proc/self/fd/N): every symlink
// resolved, " (deleted)" appended once it is unlinked. Empty when it cannot be read.
std::string OpenedPath(int fd);

}  // namespace adapt::agent
