// CommandStore: commands run in sandboxes. One domain of Store (store/store.h): a service that
// needs only this domain depends on this interface, and a test can give it a MemoryStore. Every
// method is one transaction; implementations are thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

// Each record keeps up to a MiB of stdout and of stderr: a sandbox that runs commands without
// end (an automation every second) would otherwise fill the store's disk.
inline constexpr int64_t kKeptEndedCommandsPerSandbox = 1000;

struct CommandPage {
  std::vector<CommandRecord> items;
  std::optional<int64_t> next_seq;
};

class CommandStore {
 public:
  virtual ~CommandStore() = default;

  // Inserts the command, or replaces the stored one with the same id (status changes). A
  // command that has ended (any status but "running") also drops, in the same transaction, the
  // ended commands of its sandbox older than the newest kKeptEndedCommandsPerSandbox.
  virtual Status PutCommand(const CommandRecord& command) = 0;
  // NotFound unless the command belongs to this organization's sandbox.
  virtual Result<CommandRecord> GetCommand(const std::string& org_id, const std::string& sandbox_id,
                                           const std::string& id) = 0;
  // Newest first.
  virtual Result<CommandPage> ListCommands(const std::string& org_id, const std::string& sandbox_id,
                                           int limit, std::optional<int64_t> before_seq) = 0;
  // Commands with status `status`, oldest first (the daemon's reconciliation).
  virtual Result<std::vector<CommandRecord>> ListCommandsWithStatus(const std::string& status) = 0;
};

}  // namespace adapt::store
