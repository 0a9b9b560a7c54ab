#include "core/file_replies.h"

#include <nlohmann/json.hpp>

#include "base/hex.h"
#include "base/json_parse.h"
#include "base/text.h"

namespace adapt::core {
namespace {

using nlohmann::json;

Status MalformedReply() { return FileToolFault("sent a reply adaptd cannot read"); }

// {name, type, size, mode, mtime, linkTarget?}: agent/file_util.cc's StatJson.
Result<FileEntry> EntryOf(const json& e) {
  auto text = [&](const char* key) { return e.contains(key) && e[key].is_string(); };
  if (!e.is_object() || !text("name") || !text("type") || !text("mode") || !text("mtime") ||
      !e.contains("size") || !e["size"].is_number_integer())
    return MalformedReply();
  FileEntry entry;
  entry.name = e["name"];
  // One path component, as the tool's readdir or basename gives it: a "/" or a NUL comes from
  // a replaced tool, and a client joining the name to a local directory would land elsewhere.
  if (entry.name.find_first_of(std::string("/\0", 2)) != std::string::npos) return MalformedReply();
  entry.type = e["type"];
  entry.size = e["size"].get<int64_t>();
  entry.mode = e["mode"];
  entry.mtime = e["mtime"];
  if (e.contains("linkTarget")) {
    if (!text("linkTarget")) return MalformedReply();
    entry.link_target = e["linkTarget"].get<std::string>();
  }
  return entry;
}

}  // namespace

Status FileToolFault(const std::string& what) {
  return Conflict("the sandbox's file tool " + what +
                  "; nothing was read or copied through it (was the tool or its /proc changed "
                  "inside the sandbox?)");
}

Result<DownloadHeader> ParseDownloadHeader(const std::string& line, ReportOpenedPath report) {
  size_t space = line.find(' ');
  std::string digits = line.substr(0, space);
  if (digits.empty() || digits.size() > 19 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return MalformedReply();
  // A size alone where the path was asked for: the sandbox's file tool predates --opened-path
  // (a sandbox keeping its own helpers from an older adaptd), which ignores the flag.
  if (space == std::string::npos && report == ReportOpenedPath::kYes)
    return Unsupported("workspace_path",
                       "this sandbox's file tool is older than this adaptd and cannot say which "
                       "file it opened, so nothing is copied from it; copy the file to a new "
                       "sandbox, or read it with read_workspace_file");
  if (space != std::string::npos && report == ReportOpenedPath::kNo) return MalformedReply();
  DownloadHeader header;
  header.size = std::stoull(digits);
  if (space != std::string::npos) {
    auto path = HexDecode(line.substr(space + 1));
    if (!path || path->empty() || path->front() != '/' || path->find('\0') != std::string::npos)
      return MalformedReply();
    header.opened_path = std::move(*path);
  }
  return header;
}

// The agent runs inside the sandbox: its reply is the tenant's text, depth-checked, and read
// one entry at a time (64 MiB of `{},` as one value would take over a GiB).
Result<std::vector<FileEntry>> ParseListReply(const std::string& reply) {
  std::vector<FileEntry> items;
  Status st = ParseJsonArray(reply, "the reply", [&](nlohmann::json&& e) -> Status {
    ASSIGN_OR_RETURN(FileEntry entry, EntryOf(e));
    items.push_back(std::move(entry));
    return Status::Ok();
  });
  if (!st.ok()) return MalformedReply();
  return items;
}

Result<FileEntry> ParseStatReply(const std::string& reply) {
  // One entry: a name of 255 bytes and a link target of 4096, escaped, fit many times over.
  // A bigger reply is not parsed into memory (up to the reply limit of 64 MiB, as one value).
  constexpr size_t kMaxStatReplyBytes = 64 << 10;
  if (reply.size() > kMaxStatReplyBytes) return MalformedReply();
  auto parsed = ParseJson(reply, "the reply");
  if (!parsed.ok()) return MalformedReply();
  return EntryOf(*parsed);
}

Result<std::string> CheckReadTextReply(std::string reply, size_t max_bytes) {
  if (reply.size() > max_bytes || reply.find('\0') != std::string::npos || !IsValidUtf8(reply))
    return MalformedReply();
  return reply;
}

}  // namespace adapt::core
