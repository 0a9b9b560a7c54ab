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
  // per_org, total: the caps on one organization's places and on all organizations' together
  // (0: no cap; places are still counted). A total below per_org × organizations keeps a few
  // organizations, each within its own cap, from taking every place together.
  explicit OrgCounter(size_t per_org = 0, size_t total = 0)
      : state_(std::make_shared<State>(per_org, total)) {}

  // Which cap refused a place.
  enum class Refusal { kNone, kOrganization, kTotal };

  // A place for `org_id`, or null when it holds per_org already or all hold total (`refusal`,
  // when given, says which, read under the same lock as the refusal).
  std::shared_ptr<void> TryTake(const std::string& org_id, Refusal* refusal = nullptr) {
    if (refusal) *refusal = Refusal::kNone;
    {
      std::lock_guard lock(state_->mu);
      auto it = state_->held.find(org_id);
      if (state_->per_org && it != state_->held.end() && it->second >= state_->per_org) {
        if (refusal) *refusal = Refusal::kOrganization;
        return nullptr;
      }
      if (state_->total && state_->sum >= state_->total) {
        if (refusal) *refusal = Refusal::kTotal;
        return nullptr;
      }
      size_t& n = it != state_->held.end() ? it->second : state_->held[org_id];
      ++n;
      ++state_->sum;
    }
    auto state = state_;
    // The deleter's pointer is unused: any non-null value makes the token a "held" one.
    return std::shared_ptr<void>(state.get(), [state, org_id](void*) {
      std::lock_guard lock(state->mu);
      --state->sum;
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
    State(size_t per_org, size_t total) : per_org(per_org), total(total) {}
    const size_t per_org;
    const size_t total;
    mutable std::mutex mu;
    std::map<std::string, size_t> held;  // no entry for an organization at 0
    size_t sum = 0;                      // of held
  };
  std::shared_ptr<State> state_;
};

}  // namespace adapt
