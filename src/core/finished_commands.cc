#include "core/finished_commands.h"

#include <algorithm>

namespace adapt::core {

void FinishedCommands::Keep(std::shared_ptr<const store::CommandRecord> record,
                            Clock::time_point now) {
  std::lock_guard lock(mu_);
  bytes_ += OutputBytes(*record);
  kept_.push_back({std::move(record), now});
  while (kept_.size() > 1 && (bytes_ > kKeptOutputBytes || now - kept_.front().at > kKeptFor)) {
    bytes_ -= OutputBytes(*kept_.front().record);
    kept_.pop_front();
  }
}

std::shared_ptr<const store::CommandRecord> FinishedCommands::Find(const std::string& org_id,
                                                                   const std::string& sandbox_id,
                                                                   const std::string& id,
                                                                   Clock::time_point now) {
  std::lock_guard lock(mu_);
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    const store::CommandRecord& r = *it->record;
    if (r.id != id) continue;
    bool fresh = now - it->at <= kKeptFor;
    return fresh && r.org_id == org_id && r.sandbox_id == sandbox_id ? it->record : nullptr;
  }
  return nullptr;
}

void FinishedCommands::Forget(const std::string& sandbox_id) {
  std::lock_guard lock(mu_);
  std::erase_if(kept_, [&](const Kept& k) {
    if (k.record->sandbox_id != sandbox_id) return false;
    bytes_ -= OutputBytes(*k.record);
    return true;
  });
}

}  // namespace adapt::core
