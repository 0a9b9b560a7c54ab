#include "core/file_service.h"

#include <signal.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "base/background_work.h"
#include "base/ids.h"
#include "base/log.h"
#include "core/file_transport.h"
#include "core/sandbox_in_the_way.h"
#include "core/sandbox_operations.h"
#include "core/storage_files.h"
#include "os/process.h"
#include "os/timed_io.h"

namespace adapt::core {
namespace {

constexpr size_t kChunk = 256 * 1024;
// Replies of list and stat are JSON held in memory; a directory with more entries than fit
// in this is refused rather than exhausting adaptd.
constexpr size_t kMaxReplyBytes = 64 << 20;

// Exit codes of `adapt-agent file` (agent/file_util.h is the agent's side of the contract).
// A file operation that keeps its sandbox in use until it is destroyed (a download ends when
// its reader is).
class BusyFileOp : public FileOp {
 public:
  BusyFileOp(std::unique_ptr<FileOp> op, ActivityHold busy, FileTransfers::Hold transfer)
      : transfer_(std::move(transfer)), op_(std::move(op)), busy_(std::move(busy)) {
    transfer_.OnCancel([this](std::chrono::milliseconds wait) { return op_->Abandon(wait); });
  }
  // Waits for a cancel under way to return before op_ goes.
  ~BusyFileOp() override { transfer_.OnCancel(nullptr); }
  int input_fd() const override { return op_->input_fd(); }
  int output_fd() const override { return op_->output_fd(); }
  void CloseInput() override { op_->CloseInput(); }
  Status Finish() override { return op_->Finish(); }
  const char* served_by() const override { return op_->served_by(); }
  bool Abandon(std::chrono::milliseconds wait) override { return op_->Abandon(wait); }

 private:
  FileTransfers::Hold transfer_;  // before op_, so destroyed after it: counted until the tool
                                  // and its connection are gone
  std::unique_ptr<FileOp> op_;
  ActivityHold busy_;
};

// How long a read or write waits for the tool: a limit, then deadlines from now.
struct ToolPatience {
  std::chrono::milliseconds limit;
  os::Deadline Deadline() const { return std::chrono::steady_clock::now() + limit; }
  // What a read or write that gave up at its deadline says.
  Status Stalled(const Status& st) const {
    if (st.code() != Code::kUnavailable) return st;
    std::string span = limit.count() % 1000 == 0 ? std::to_string(limit.count() / 1000) + " s"
                                                 : std::to_string(limit.count()) + " ms";
    return Status(Code::kUnavailable, "the sandbox's file tool took or sent nothing for " + span +
                                          " (is it stopped?); the operation was abandoned");
  }
};

enum AgentExit {
  kFailed = 1,
  kNotFound = 3,
  kBadTarget = 4,
  kDenied = 5,
  kConflict = 6,
  kTooLarge = 7,
  kNotText = 8,
  kUnsafeArchive = 9,
  kNoSpace = 10,
};

// Reads `fd` to its end (at most `limit` bytes kept; more is an error).
Result<std::string> ReadAll(int fd, size_t limit, const ToolPatience& patience) {
  std::string out;
  std::vector<char> buf(kChunk);
  for (;;) {
    auto n = os::ReadSomeBefore(fd, buf.data(), buf.size(), patience.Deadline());
    if (!n.ok()) return patience.Stalled(n.status());
    if (*n == 0) return out;
    if (out.size() + *n > limit)
      return Status(Code::kPayloadTooLarge,
                    "the reply is larger than " + std::to_string(limit) + " bytes");
    out.append(buf.data(), *n);
  }
}

class AgentReader final : public FileReader {
 public:
  AgentReader(std::unique_ptr<FileOp> process, std::shared_ptr<void> place, ToolPatience patience,
              std::string pending, std::optional<uint64_t> size, std::string opened_path = "")
      : place_(std::move(place)),
        process_(std::move(process)),
        patience_(patience),
        pending_(std::move(pending)),
        size_(size),
        opened_path_(std::move(opened_path)) {}

  std::optional<uint64_t> size() const override { return size_; }

  long Read(char* buf, size_t n) override {
    if (!pending_.empty()) {
      size_t take = std::min(n, pending_.size());
      std::memcpy(buf, pending_.data(), take);
      pending_.erase(0, take);
      return static_cast<long>(take);
    }
    auto got = os::ReadSomeBefore(process_->output_fd(), buf, n, patience_.Deadline());
    return got.ok() ? static_cast<long>(*got) : -1;
  }

  Status Finish() override { return process_->Finish(); }
  const char* served_by() const override { return process_->served_by(); }
  const std::string& opened_path() const override { return opened_path_; }
  void MovedOffWorker() override { place_.reset(); }

 private:
  // Before process_, so given back after it: the process's end holds the worker too.
  std::shared_ptr<void> place_;  // the organization's place among operations on workers
  std::unique_ptr<FileOp> process_;
  ToolPatience patience_;
  std::string pending_;
  std::optional<uint64_t> size_;
  std::string opened_path_;
};

// Copies `source` into `fd`, reading ahead on a thread of its own so that the network and
// the sandbox's pipe work in parallel (at most kReadAhead chunks wait in memory). A 400 when
// the source failed, the stall when the tool took nothing for its patience (its reply is not
// waited for then); a write that fails otherwise (the agent exited early) just ends the copy.
Status Feed(const ByteSource& source, int fd, const ToolPatience& patience) {
  Status stalled = Status::Ok();
  constexpr size_t kReadAhead = 4;
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::string> queue;
  bool ended = false, failed = false, stop = false;
  // A reader that threw ends the copy as a failed source would.
  auto reader_failed = [&](const std::string&) {
    std::lock_guard lock(mu);
    ended = failed = true;
    changed.notify_all();
  };
  std::thread reader(Guarded(
      "reading an upload into a sandbox",
      [&] {
        for (;;) {
          std::string chunk(kChunk, '\0');
          long n = source(chunk.data(), chunk.size());
          std::unique_lock lock(mu);
          if (n <= 0) {
            ended = true;
            failed = n < 0;
            changed.notify_all();
            return;
          }
          chunk.resize(static_cast<size_t>(n));
          changed.wait(lock, [&] { return stop || queue.size() < kReadAhead; });
          if (stop) return;
          queue.push_back(std::move(chunk));
          changed.notify_all();
        }
      },
      reader_failed));
  // Whatever way this function is left, the reader is told to stop and joined: a joinable
  // std::thread destroyed by an exception would end adaptd.
  struct StopAndJoin {
    std::thread& reader;
    std::mutex& mu;
    std::condition_variable& changed;
    bool& stop;
    ~StopAndJoin() {
      {
        std::lock_guard lock(mu);
        stop = true;
        changed.notify_all();
      }
      reader.join();
    }
  };
  {
    StopAndJoin joined{reader, mu, changed, stop};
    for (;;) {
      std::string chunk;
      {
        std::unique_lock lock(mu);
        changed.wait(lock, [&] { return ended || !queue.empty(); });
        if (queue.empty()) break;  // ended
        chunk = std::move(queue.front());
        queue.pop_front();
        changed.notify_all();
      }
      Status written = os::WriteAllBefore(fd, chunk, patience.Deadline());
      if (written.code() == Code::kUnavailable) stalled = patience.Stalled(written);
      if (!written.ok()) break;
    }
  }
  std::lock_guard lock(mu);
  if (failed) return InvalidArgument("body", "the upload ended before the whole body arrived");
  return stalled;
}

std::string LastLine(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  size_t nl = t.rfind('\n');
  std::string line = nl == std::string::npos ? t : t.substr(nl + 1);
  constexpr std::string_view kPrefix = "adapt-agent: ";
  if (line.compare(0, kPrefix.size(), kPrefix) == 0) line.erase(0, kPrefix.size());
  return line;
}

}  // namespace

struct FileService::Started {
  // The organization's place among operations in flight: held while a worker waits on the
  // tool; a download's reader keeps it until a stream (a thread of its own) takes it over.
  // Declared first, so given back last: the process's end (a kill, then up to 30 s for its
  // exit, file_transport.cc) holds the worker as the operation did.
  std::shared_ptr<void> place;
  std::unique_ptr<FileOp> process;
};

Status ValidateFilePath(const std::string& path, const std::string& field) {
  if (path.empty()) return InvalidArgument(field, field + " is required");
  if (path.find('\0') != std::string::npos)
    return InvalidArgument(field, field + " must not contain NUL bytes");
  if (path.size() > kMaxPathBytes)
    return InvalidArgument(field,
                           field + " is longer than " + std::to_string(kMaxPathBytes) + " bytes");
  // Linux's NAME_MAX: a longer name is refused here, not by the walk that opens it (on the
  // host, for a volume read, its ENAMETOOLONG was an internal error, a 500).
  constexpr size_t kMaxNameBytes = 255;
  for (size_t start = 0; start < path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end - start > kMaxNameBytes)
      return InvalidArgument(
          field, field + " has a name longer than " + std::to_string(kMaxNameBytes) + " bytes");
    start = end + 1;
  }
  return Status::Ok();
}

Status FileSignalError(int signal) {
  return FileToolFault("was killed by signal " + std::to_string(signal));
}

Status FileErrorFor(int exit_code, const std::string& stderr_text) {
  std::string message = LastLine(stderr_text);
  if (message.empty())
    message = "the file operation failed (exit " + std::to_string(exit_code) + ")";
  switch (exit_code) {
    case kNotFound:
      return NotFound(message);
    case kBadTarget:
    case kNotText:
      return InvalidArgument("path", message);
    case kDenied:
      return Status(Code::kPermissionDenied, message);
    case kConflict:
      return Conflict(message);
    case kTooLarge:
      return Status(Code::kPayloadTooLarge, message);
    case kUnsafeArchive:
      return InvalidArgument("body", message);
    case kNoSpace:
      return Status(Code::kResourceExhausted, message);
    case kFailed:
      return Conflict(LastLine(stderr_text).empty()
                          ? "the file operation failed inside the sandbox (exit 1)"
                          : "the file operation failed inside the sandbox: " + message);
    default:
      return Internal("file operation failed: " + message);
  }
}

FileService::FileService(store::Store& store, runtime::Runtime& runtime)
    : store_(store), runtime_(runtime) {}

Result<FileService::Started> FileService::Start(const Principal& who, const std::string& sandbox_id,
                                                std::vector<std::string> args) {
  if (!IsValidId(sandbox_id, "sbx")) return NotFound("sandbox " + sandbox_id + " not found");
  ASSIGN_OR_RETURN(store::SandboxRecord sandbox, store_.GetSandbox(who.org_id, sandbox_id));
  if (sandbox.status != "running")
    return Conflict("sandbox " + sandbox_id + " is " + sandbox.status +
                    "; files are available only while it runs");
  std::shared_ptr<void> place = in_flight_.TryTake(who.org_id);
  if (!place)
    return Status(Code::kResourceExhausted,
                  "the organization already has " + std::to_string(in_flight_.per_org()) +
                      " file operations running in its sandboxes, the most it may at once; "
                      "retry when one has ended");
  // Counted before looking for a checkpoint under way (file_transfers.h).
  FileTransfers::Hold transfer = transfers_ ? transfers_->Begin(sandbox_id) : FileTransfers::Hold();
  RETURN_IF_ERROR(RefuseDuringCheckpointWork(store_, sandbox_id));
  auto busy = [&](std::unique_ptr<FileOp> op) {
    return Started{std::move(place),
                   std::make_unique<BusyFileOp>(std::move(op), ActivityHold(activity_, sandbox_id),
                                                std::move(transfer))};
  };
  if (auto agent = runtime_.AgentAfterBoot(sandbox_id)) {
    auto op = StartViaAgent(agent, sandbox_id, args);
    if (op.ok()) return busy(std::move(*op));
    if (op.status().code() != Code::kUnavailable) return op.status();
    spdlog::info("sandbox {}: file operation through runsc exec: {}", sandbox_id,
                 op.status().message());
  }
  ASSIGN_OR_RETURN(auto op, StartExecFileOp(runtime_, sandbox_id, args));
  return busy(std::move(op));
}

Result<std::unique_ptr<FileOp>> FileService::StartViaAgent(
    std::shared_ptr<runtime::AgentSession> agent, const std::string& sandbox_id,
    const std::vector<std::string>& args) {
  // The tool runs as runsc exec would run it: the workload's user, cwd and environment
  // (relative paths resolve against the image's working directory either way).
  auto d = runtime_.GetExecDefaults(sandbox_id);
  // Read from the sandbox's directory on the host: its message names host paths.
  if (!d.ok())
    return d.status()
        .WithCode(Code::kUnavailable)
        .WithClientMessage("the sandbox's process settings could not be read");
  agent::SpawnRequest spawn;
  spawn.argv = {kAgentPath, "file"};
  spawn.argv.insert(spawn.argv.end(), args.begin(), args.end());
  spawn.env = d->env;
  spawn.cwd = d->cwd;
  spawn.uid = d->uid;
  spawn.gid = d->gid;
  return StartAgentFileOp(std::move(agent), std::move(spawn));
}

Status FileService::JudgedAgainstSandbox(const Principal& who, const std::string& sandbox_id,
                                         Status failed) {
  // The sandbox's own refusals (Conflict, NotFound, ...) and a client that went away stand.
  if (failed.code() != Code::kInternal && failed.code() != Code::kUnavailable) return failed;
  auto met = AwaitSandboxInTheWay(store_, runtime_, who.org_id, sandbox_id, end_settle_);
  if (!met) return failed;
  if (met->busy_with) return SandboxBusy(sandbox_id, *met->busy_with);
  return Conflict("sandbox " + sandbox_id + " stopped running during the file operation (" +
                  met->ended + "); files are available only while it runs");
}

Result<std::string> FileService::RunToEnd(const Principal& who, const std::string& sandbox_id,
                                          std::vector<std::string> args, const ByteSource* source,
                                          std::string* served_by) {
  ASSIGN_OR_RETURN(Started started, Start(who, sandbox_id, std::move(args)));
  FileOp& p = *started.process;
  if (served_by) *served_by = p.served_by();
  auto judged = [&](Status st) { return JudgedAgainstSandbox(who, sandbox_id, std::move(st)); };
  if (source) {
    // The client went away: the agent is killed before it renames anything into place.
    if (Status fed = Feed(*source, p.input_fd(), {silence_limit_}); !fed.ok())
      return judged(std::move(fed));
  }
  p.CloseInput();
  auto out = ReadAll(p.output_fd(), kMaxReplyBytes, {silence_limit_});
  // A tool that stalled is not waited for again: dropping the operation kills it.
  if (!out.ok() && out.status().code() == Code::kUnavailable) return judged(out.status());
  if (Status finished = p.Finish(); !finished.ok()) return judged(std::move(finished));
  return out;
}

Status FileService::Upload(const Principal& who, const std::string& sandbox_id,
                           const std::string& path, const std::string& mode,
                           const ByteSource& source, std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  std::vector<std::string> args = {"put", path};
  if (!mode.empty()) {
    if (mode.size() > 5 || mode.find_first_not_of("01234567") != std::string::npos ||
        std::stoul(mode, nullptr, 8) > 07777)
      return InvalidArgument("mode", "mode must be octal permission bits such as 0644");
    args.insert(args.end(), {"--mode", mode});
  }
  return RunToEnd(who, sandbox_id, std::move(args), &source, served_by).status();
}

Result<std::unique_ptr<FileReader>> FileService::Download(const Principal& who,
                                                          const std::string& sandbox_id,
                                                          const std::string& path,
                                                          ReportOpenedPath report) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  std::vector<std::string> args = {"get", path, "--header"};
  if (report == ReportOpenedPath::kYes) args.push_back("--opened-path");
  ASSIGN_OR_RETURN(Started started, Start(who, sandbox_id, std::move(args)));
  started.process->CloseInput();
  // The agent prints the size on a line of its own once the file is open.
  const ToolPatience patience{silence_limit_};
  std::string head;
  std::vector<char> buf(kChunk);
  while (head.find('\n') == std::string::npos) {
    auto n = os::ReadSomeBefore(started.process->output_fd(), buf.data(), buf.size(),
                                patience.Deadline());
    if (!n.ok() && n.status().code() == Code::kUnavailable)
      return JudgedAgainstSandbox(who, sandbox_id, patience.Stalled(n.status()));
    if (!n.ok() || *n == 0) {
      Status finished = started.process->Finish();
      return JudgedAgainstSandbox(
          who, sandbox_id, finished.ok() ? FileToolFault("ended without a reply") : finished);
    }
    head.append(buf.data(), *n);
    if (head.size() > kChunk * 2) return FileToolFault("sent a reply adaptd cannot read");
  }
  size_t nl = head.find('\n');
  ASSIGN_OR_RETURN(DownloadHeader header, ParseDownloadHeader(head.substr(0, nl), report));
  return std::unique_ptr<FileReader>(std::make_unique<AgentReader>(
      std::move(started.process), std::move(started.place), patience, head.substr(nl + 1),
      header.size, std::move(header.opened_path)));
}

Result<FileListing> FileService::List(const Principal& who, const std::string& sandbox_id,
                                      const std::string& path, std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  ASSIGN_OR_RETURN(std::string out, RunToEnd(who, sandbox_id, {"list", path}, nullptr, served_by));
  ASSIGN_OR_RETURN(auto items, ParseListReply(out));
  return FileListing{path, std::move(items)};
}

Result<FileEntry> FileService::Stat(const Principal& who, const std::string& sandbox_id,
                                    const std::string& path, std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  ASSIGN_OR_RETURN(std::string out, RunToEnd(who, sandbox_id, {"stat", path}, nullptr, served_by));
  return ParseStatReply(out);
}

Status FileService::Remove(const Principal& who, const std::string& sandbox_id,
                           const std::string& path, bool recursive, std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  std::vector<std::string> args = {"rm", path};
  if (recursive) args.push_back("--recursive");
  return RunToEnd(who, sandbox_id, std::move(args), nullptr, served_by).status();
}

Status FileService::MakeDir(const Principal& who, const std::string& sandbox_id,
                            const std::string& path, bool parents, std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  std::vector<std::string> args = {"mkdir", path};
  if (parents) args.push_back("--parents");
  return RunToEnd(who, sandbox_id, std::move(args), nullptr, served_by).status();
}

Result<std::unique_ptr<FileReader>> FileService::ArchiveGet(const Principal& who,
                                                            const std::string& sandbox_id,
                                                            const std::string& path) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  ASSIGN_OR_RETURN(Started started, Start(who, sandbox_id, {"archive-get", path}));
  started.process->CloseInput();
  // A tar stream is never empty (it ends with two zero blocks): no bytes means a failure,
  // reported before the response starts.
  std::string first(kChunk, '\0');
  const ToolPatience patience{silence_limit_};
  auto n = os::ReadSomeBefore(started.process->output_fd(), first.data(), first.size(),
                              patience.Deadline());
  if (!n.ok() && n.status().code() == Code::kUnavailable)
    return JudgedAgainstSandbox(who, sandbox_id, patience.Stalled(n.status()));
  if (!n.ok() || *n == 0) {
    Status finished = started.process->Finish();
    return JudgedAgainstSandbox(who, sandbox_id,
                                finished.ok() ? FileToolFault("ended without a reply") : finished);
  }
  first.resize(*n);
  return std::unique_ptr<FileReader>(
      std::make_unique<AgentReader>(std::move(started.process), std::move(started.place), patience,
                                    std::move(first), std::nullopt));
}

Status FileService::ArchivePut(const Principal& who, const std::string& sandbox_id,
                               const std::string& path, const ByteSource& source,
                               std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  return RunToEnd(who, sandbox_id, {"archive-put", path}, &source, served_by).status();
}

Result<std::string> FileService::ReadText(const Principal& who, const std::string& sandbox_id,
                                          const std::string& path, size_t max_bytes,
                                          std::string* served_by) {
  RETURN_IF_ERROR(ValidateFilePath(path));
  std::string full = path[0] == '/' ? path : "/workspace/" + path;
  if (full.size() > kMaxPathBytes) RETURN_IF_ERROR(ValidateFilePath(full));
  if (storage_files_ && IsValidId(sandbox_id, "sbx")) {
    ASSIGN_OR_RETURN(store::SandboxRecord sandbox, store_.GetSandbox(who.org_id, sandbox_id));
    if (sandbox.status != "running" && sandbox.config.storage && PathInWorkspace(full).ok()) {
      if (served_by) *served_by = "storage";
      return storage_files_->ReadText(who, *sandbox.config.storage, full, max_bytes);
    }
  }
  ASSIGN_OR_RETURN(std::string reply,
                   RunToEnd(who, sandbox_id, {"read-text", full, std::to_string(max_bytes)},
                            nullptr, served_by));
  return CheckReadTextReply(std::move(reply), max_bytes);
}

}  // namespace adapt::core
