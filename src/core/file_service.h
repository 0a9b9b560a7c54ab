// FileService: files inside a running sandbox (issue 4). Every operation runs the agent's
// file tool (`/.adapt/adapt-agent file <op>`) inside the sandbox, so paths resolve in the
// sandbox's own filesystem and can never reach the host's: over the agent's session (a data
// connection per operation) when the agent is connected, else through Runtime::Exec
// (core/file_transport.h). Bytes stream, so adaptd's memory stays flat whatever the size.
// Each operation can report which path served it ("agent" or "runsc-exec") in `served_by`.
//
// Paths: absolute, or relative to the image's working directory (the exec's cwd); at most
// kMaxPathBytes bytes, no NUL. ReadText resolves relative paths under /workspace instead.
// Errors: 404 no such sandbox (another organization's included) or file, 409 when the
// sandbox is not running (the message names its status), 400 bad path / is a directory /
// not text / unsafe archive entry, 403 permission denied in the sandbox, 413 over a limit.
// Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/org_counter.h"
#include "core/auth.h"
#include "core/file_replies.h"
#include "core/file_transfers.h"
#include "core/sandbox_activity.h"
#include "runtime/runtime.h"
#include "store/store.h"

namespace adapt::core {

class FileOp;        // core/file_transport.h
class StorageFiles;  // core/storage_files.h

constexpr size_t kMaxPathBytes = 4096;
// Where the agent is mounted in every sandbox (runtime: <state>/helpers, read-only).
constexpr const char* kAgentPath = "/.adapt/adapt-agent";

struct FileListing {
  std::string path;
  std::vector<FileEntry> items;
};

// Fills up to n bytes; returns the count, 0 at the end, -1 when the source failed.
using ByteSource = std::function<long(char* buf, size_t n)>;

// An agent's output being read: a download or an archive. Destroying it before Finish
// kills the agent.
class FileReader {
 public:
  virtual ~FileReader() = default;
  // The exact number of bytes Read will produce, when known (file downloads).
  virtual std::optional<uint64_t> size() const = 0;
  // Up to n bytes; 0 at the end; -1 on a read error.
  virtual long Read(char* buf, size_t n) = 0;
  // Waits for the agent to exit; its error when it failed.
  virtual Status Finish() = 0;
  // "agent" or "runsc-exec".
  virtual const char* served_by() const = 0;
  // The path the sandbox's kernel gives the file being read (every symlink resolved), taken
  // from the very descriptor the bytes come from, so a check of it cannot be raced; empty
  // unless the Download asked for it.
  virtual const std::string& opened_path() const = 0;
  // The reader is read from here on by a stream's own thread, not by an API worker: it gives
  // up its organization's place among file operations waiting on workers (the stream is
  // counted by the API's stream limit instead). Until then it holds the place, so that a
  // caller reading the whole file on a worker (an artifact's copy) stays within the cap.
  virtual void MovedOffWorker() {}
};

class FileService {
 public:
  FileService(store::Store& store, runtime::Runtime& runtime);
  // Where a transfer marks its sandbox in use while it runs (idle_tracker.h). Set before
  // serving.
  void set_activity(SandboxActivity* activity) { activity_ = activity; }
  // Where operations count themselves for the checkpoints (file_transfers.h); none: uncounted.
  void set_transfers(FileTransfers* transfers) { transfers_ = transfers; }
  // Where ReadText reads a durable sandbox's /workspace while the sandbox does not run (its
  // persistent storage outlives it). Set before serving; without it, only running sandboxes.
  void set_storage_files(const StorageFiles* storage_files) { storage_files_ = storage_files; }
  // How many file operations one organization may have waiting on its sandboxes at once (0:
  // no cap), each holding a blocking worker thread until its tool answers (a download until
  // its header, after which its stream's own thread reads): the sandbox's root can stall its
  // own answers (stop the agent's tool), and without a cap a few such requests would hold
  // every API worker of every organization. Past it, 429. Set before serving.
  void set_max_in_flight_per_org(size_t n) { in_flight_ = OrgCounter(n); }
  // How long an operation waits for its sandbox's tool to take or send a byte before it fails
  // (503): long enough for a legitimate `rm -r` or extraction that prints nothing till its end.
  static constexpr std::chrono::seconds kToolSilenceLimit{300};
  // kToolSilenceLimit unless a test shortens it. Set before serving.
  void set_tool_silence_limit(std::chrono::milliseconds limit) { silence_limit_ = limit; }
  // How long a failed operation waits to learn whether its sandbox stopped running (tests).
  void set_end_settle(std::chrono::milliseconds settle) { end_settle_ = settle; }

  // Writes `source` to `path` (replaced as a whole: a temp file renamed at the end). A source
  // that fails leaves the old file in place. `mode` is octal text, empty: keep or 0644.
  Status Upload(const Principal& who, const std::string& sandbox_id, const std::string& path,
                const std::string& mode, const ByteSource& source,
                std::string* served_by = nullptr);
  // Opens `path` for reading; file errors are reported here, before any byte moves. Only a
  // regular file is read: a directory, a FIFO or a device is refused (400) at once.
  Result<std::unique_ptr<FileReader>> Download(const Principal& who, const std::string& sandbox_id,
                                               const std::string& path,
                                               ReportOpenedPath report = ReportOpenedPath::kNo);
  // The entries of a directory (or the file itself).
  Result<FileListing> List(const Principal& who, const std::string& sandbox_id,
                           const std::string& path, std::string* served_by = nullptr);
  Result<FileEntry> Stat(const Principal& who, const std::string& sandbox_id,
                         const std::string& path, std::string* served_by = nullptr);
  Status Remove(const Principal& who, const std::string& sandbox_id, const std::string& path,
                bool recursive, std::string* served_by = nullptr);
  Status MakeDir(const Principal& who, const std::string& sandbox_id, const std::string& path,
                 bool parents, std::string* served_by = nullptr);
  // A tar stream of a file, or of a directory's contents.
  Result<std::unique_ptr<FileReader>> ArchiveGet(const Principal& who,
                                                 const std::string& sandbox_id,
                                                 const std::string& path);
  // Extracts a tar stream under directory `path` (created). Entries with absolute names,
  // "..", or links pointing outside `path` are refused (400).
  Status ArchivePut(const Principal& who, const std::string& sandbox_id, const std::string& path,
                    const ByteSource& source, std::string* served_by = nullptr);
  // The UTF-8 text of a file of at most `max_bytes` bytes: 400 for binary or invalid UTF-8,
  // 413 when larger. For read_workspace_file: relative paths resolve under /workspace. A
  // durable sandbox that does not run is read from its persistent storage (served_by
  // "storage"), for paths under /workspace; what else it had is gone with it (409).
  Result<std::string> ReadText(const Principal& who, const std::string& sandbox_id,
                               const std::string& path, size_t max_bytes,
                               std::string* served_by = nullptr);

 private:
  struct Started;
  Result<Started> Start(const Principal& who, const std::string& sandbox_id,
                        std::vector<std::string> args);
  Result<std::unique_ptr<FileOp>> StartViaAgent(std::shared_ptr<runtime::AgentSession> agent,
                                                const std::string& sandbox_id,
                                                const std::vector<std::string>& args);
  Result<std::string> RunToEnd(const Principal& who, const std::string& sandbox_id,
                               std::vector<std::string> args, const ByteSource* source,
                               std::string* served_by);
  // `failed` as the client is told it: when the sandbox stopped running during the operation
  // (its startup command ended: runsc exec then refuses the stopped container, the agent's
  // connection drops), a Conflict that says so, as the operation would have been a moment
  // later, not adaptd's internal error.
  Status JudgedAgainstSandbox(const Principal& who, const std::string& sandbox_id, Status failed);

  store::Store& store_;
  runtime::Runtime& runtime_;
  SandboxActivity* activity_ = nullptr;
  FileTransfers* transfers_ = nullptr;
  const StorageFiles* storage_files_ = nullptr;
  OrgCounter in_flight_;
  std::chrono::milliseconds silence_limit_ = kToolSilenceLimit;
  // The shim records a workload's end tens of milliseconds after gVisor stopped it.
  std::chrono::milliseconds end_settle_{1000};
};

// Checks a path given by a client: non-empty, no NUL, at most kMaxPathBytes.
Status ValidateFilePath(const std::string& path, const std::string& field = "path");
// The Status for an agent's exit code and the last line of its stderr: a failure inside the
// sandbox (exit 1) is Conflict; only adaptd's own misuse (exit 2) and runsc's failures are
// Internal.
Status FileErrorFor(int exit_code, const std::string& stderr_text);
// The Status for a file tool killed by a signal (inside the sandbox: Conflict).
Status FileSignalError(int signal);

}  // namespace adapt::core
