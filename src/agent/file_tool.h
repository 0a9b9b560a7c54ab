// The agent's one-shot file operations (`adapt-agent file <op> ...`), run by adaptd through
// `runsc exec` inside the sandbox, so every path resolves in the sandbox's own filesystem
// and can never reach the host's. Operations, with their stdin/stdout:
//   put PATH [--mode OCTAL]      stdin -> PATH (a temp file beside it, renamed at the end;
//                                SIGTERM, HUP or INT before then removes it)
//   get PATH [--header [--opened-path]]
//                                PATH -> stdout; --header first prints "<size>\n", or with
//                                --opened-path "<size> <hex of the opened file's path>\n"
//   list PATH                    JSON array of the entries of directory PATH (or PATH itself)
//   stat PATH                    JSON object (name, type, size, mode, mtime[, linkTarget])
//   rm PATH [--recursive]        removes a file, a link, an empty directory, or a tree
//   mkdir PATH [--parents]
//   archive-get PATH             tar of PATH (a file, or a directory's contents) -> stdout
//   archive-put PATH             tar on stdin extracted under directory PATH (created)
//   read-text PATH MAX           PATH -> stdout when it is UTF-8 text of at most MAX bytes
// Reads (get, read-text, archive-get) open without blocking and refuse anything but a regular
// file before reading, so a FIFO never hangs them; put refuses to replace one.
// Failures exit with a FileExit code (agent/file_util.h) and one line on stderr.
#pragma once

#include <functional>
#include <string>

namespace adapt::agent {

// argv[0] is the operation. Returns the process exit code.
int RunFileTool(int argc, char** argv);

// mkdir, used by archive-put too.
int MakeDir(const std::string& path, bool parents);

// The archive operations (file_archive.cc).
int ArchiveGet(const char* path);
int ArchivePut(const char* path);
// archive-put's extraction from any byte source (0 at the end, -1 on error).
int ArchivePutFrom(const char* path, const std::function<long(char*, size_t)>& read);

// `adapt-agent fetch-release URL_FILE DIR MAX_UNPACKED` (release_fetch.cc): a deployed app's
// replica downloads its release (a zstd tar, or an older plain one) over HTTP from the URL
// in URL_FILE (a release reference through the storage gateway) and unpacks it under DIR,
// with archive-put's checks and at most MAX_UNPACKED bytes of tar.
int FetchRelease(const char* url_file, const char* dir, const char* max_unpacked);

}  // namespace adapt::agent
