// What the sandbox's file tool (`/.adapt/adapt-agent file <op>`) sends back: a list, a stat
// and a download's header line. The tool runs inside the sandbox, where its root can replace
// it, so each reply is the tenant's text: anything but the expected shape is the sandbox's
// fault (Conflict, "a reply adaptd cannot read"), never trusted and never a crash
// (fuzz/fuzz_untrusted_replies.cc feeds these).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace adapt::core {

// One file as the agent's stat sees it.
struct FileEntry {
  std::string name;
  std::string type;                        // "file", "dir", "symlink", "other"
  int64_t size = 0;                        // bytes
  std::string mode;                        // four octal digits, "0644"
  std::string mtime;                       // RFC 3339, UTC
  std::optional<std::string> link_target;  // symlinks only
};

// Whether a download asks the sandbox which file it opened (FileReader::opened_path).
enum class ReportOpenedPath { kNo, kYes };

// The first line of the agent's `get --header` without its newline: "<size>", or with
// ReportOpenedPath::kYes "<size> <hex of the opened file's path>".
struct DownloadHeader {
  uint64_t size = 0;
  std::string opened_path;  // empty unless reported
};

// The Status of a file tool that misbehaved (`what` it did): what it sends or how it ends is
// the sandbox's doing, answered as the sandbox's state (409), not as adaptd's fault (500).
Status FileToolFault(const std::string& what);

// The reply to `file list` (a JSON array of entries) and to `file stat` (one entry
// {name, type, size, mode, mtime, linkTarget?}).
Result<std::vector<FileEntry>> ParseListReply(const std::string& reply);
Result<FileEntry> ParseStatReply(const std::string& reply);
// The download header (DownloadHeader): anything else, or a path missing where it was asked
// for, is the sandbox's fault (Conflict, as above).
Result<DownloadHeader> ParseDownloadHeader(const std::string& line, ReportOpenedPath report);
// The reply to `file read-text` with `max_bytes`: the text, checked as the tool checks it (at
// most max_bytes, no NUL, valid UTF-8), since the sandbox's root can answer anything.
Result<std::string> CheckReadTextReply(std::string reply, size_t max_bytes);

}  // namespace adapt::core
