// FileTransfers: the file operations in flight in each sandbox, which a checkpoint must not
// meet. An operation served by the agent holds a connection of the sandbox's (its data
// connection, a Unix socket to adaptd) that this runsc cannot save ("encoding error at object
// transport.connectionedEndpoint"), and a refused save tears the sandbox down, its processes
// lost. So a file operation counts itself here before it looks for a checkpoint or roll back
// under way (the sandbox's open operations in the store), and a checkpoint records its
// operation before it waits here for none: whichever comes second sees the first. A stop does
// not wait a transfer out: it ends them (Cancel), since its sandbox stops either way.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace adapt::core {

class FileTransfers {
 public:
  // Asks one operation to end; whether it is known to have ended within the time given.
  using Canceller = std::function<bool(std::chrono::milliseconds)>;

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

    // How Cancel reaches the operation once it runs. Set to nullptr before what it reaches
    // is destroyed: that waits for a Cancel calling it to return.
    void OnCancel(Canceller cancel);

   private:
    friend class FileTransfers;
    struct Slot {
      std::mutex mu;
      Canceller cancel;
    };
    void Release();
    FileTransfers* transfers_ = nullptr;
    std::string id_;
    std::shared_ptr<Slot> slot_;
  };

  Hold Begin(const std::string& id) { return Hold(this, id); }
  // Whether sandbox `id` has no operation in flight, waiting up to `wait` for the last to end.
  bool AwaitNone(const std::string& id, std::chrono::milliseconds wait);
  int InFlight(const std::string& id);
  // Asks every operation in flight in sandbox `id` to end. Whether each is known to have ended
  // within `wait` (one not started yet, or whose end cannot be seen, is not).
  bool Cancel(const std::string& id, std::chrono::milliseconds wait);

 private:
  void Add(const std::string& id, const std::shared_ptr<Hold::Slot>& slot);
  void Remove(const std::string& id, const std::shared_ptr<Hold::Slot>& slot);

  std::mutex mu_;
  std::condition_variable ended_;
  std::map<std::string, std::vector<std::shared_ptr<Hold::Slot>>> in_flight_;  // none: no entry
};

}  // namespace adapt::core
