// How many of something each organization holds at once, up to a cap: a taken place is a
// token that gives it back when the last copy of it goes. The count outlives the counter for
// tokens still held (a stream's thread may end after adaptd's services are gone).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace adapt {

class OrgCounter {
 public:
  // 0: no cap (places are still counted).
  explicit OrgCounter(size_t per_org = 0) : state_(std::make_shared<State>(per_org)) {}

  // A place for `org_id`, or null when it holds per_org already.
  std::shared_ptr<void> TryTake(const std::string& org_id) {
    {
      std::lock_guard lock(state_->mu);
      size_t& n = state_->held[org_id];
      if (state_->per_org && n >= state_->per_org) return nullptr;
      ++n;
    }
    auto state = state_;
    // The deleter's pointer is unused: any non-null value makes the token a "held" one.
    return std::shared_ptr<void>(state.get(), [state, org_id](void*) {
      std::lock_guard lock(state->mu);
      auto it = state->held.find(org_id);
      if (it != state->held.end() && --it->second == 0) state->held.erase(it);
    });
  }

  size_t Held(const std::string& org_id) const {
    std::lock_guard lock(state_->mu);
    auto it = state_->held.find(org_id);
    return it == state_->held.end() ? 0 : it->second;
  }
  size_t per_org() const { return state_->per_org; }

 private:
  struct State {
    explicit State(size_t per_org) : per_org(per_org) {}
    const size_t per_org;
    mutable std::mutex mu;
    std::map<std::string, size_t> held;  // no entry for an organization at 0
  };
  std::shared_ptr<State> state_;
};

}  // namespace adapt
