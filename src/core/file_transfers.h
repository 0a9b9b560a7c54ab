// FileTransfers: the file operations in flight in each sandbox, which a checkpoint must not
// meet. An operation served by the agent holds a connection of the sandbox's (its data
// connection, a Unix socket to adaptd) that this runsc cannot save ("encoding error at object
// transport.connectionedEndpoint"), and a refused save tears the sandbox down, its processes
// lost. So a file operation counts itself here before it looks for a checkpoint or roll back
// under way (the sandbox's open operations in the store), and a checkpoint records its
// operation before it waits here for none: whichever comes second sees the first.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace adapt::core {

class FileTransfers {
 public:
  // Counts one operation in sandbox `id` while it lives. Movable.
  class Hold {
   public:
    Hold() = default;
    Hold(FileTransfers* transfers, std::string id);
    Hold(Hold&& other) noexcept;
    Hold& operator=(Hold&& other) noexcept;
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold() { Release(); }

   private:
    void Release();
    FileTransfers* transfers_ = nullptr;
    std::string id_;
  };

  Hold Begin(const std::string& id) { return Hold(this, id); }
  // Whether sandbox `id` has no operation in flight, waiting up to `wait` for the last to end.
  bool AwaitNone(const std::string& id, std::chrono::milliseconds wait);
  int InFlight(const std::string& id);

 private:
  void Add(const std::string& id, int delta);

  std::mutex mu_;
  std::condition_variable ended_;
  std::map<std::string, int> in_flight_;  // no entry: none
};

}  // namespace adapt::core
