// Checkpoint work: a client's stop, named checkpoint or roll back holds a worker thread for as
// long as runsc and the copies of memory and disk take, minutes for a large sandbox. The
// workers are shared by every organization's requests, so an organization may have only so
// many such requests at once (adaptd: half its worker threads); past that a request is
// refused at once instead of queued behind them. One counter is shared by the services whose
// verbs do such work (SandboxService::Stop, CheckpointService::Take and Restore).
#pragma once

#include <memory>
#include <string>

#include "base/org_counter.h"
#include "base/status.h"

namespace adapt::core {

// A place for `org_id` in `work`, held while the token lives; ResourceExhausted when the
// organization holds them all.
inline Result<std::shared_ptr<void>> TakeCheckpointWorkPlace(OrgCounter& work,
                                                             const std::string& org_id) {
  std::shared_ptr<void> place = work.TryTake(org_id);
  if (!place)
    return Status(Code::kResourceExhausted,
                  "the organization already has " + std::to_string(work.per_org()) +
                      " stops, checkpoints or roll backs of its sandboxes running, the most it "
                      "may at once; retry when one has ended");
  return place;
}

}  // namespace adapt::core
