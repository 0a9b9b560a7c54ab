#include "core/automation_service.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>

#include "base/background_work.h"
#include "base/client_message.h"
#include "base/fault_point.h"
#include "base/ids.h"
#include "base/log.h"
#include "base/time.h"
#include "core/command_request.h"
#include "core/controller_service.h"

namespace adapt::core {
namespace {

constexpr int kNextRunsShown = 5;
constexpr int kDuePerPass = 200;
constexpr int64_t kMaxCatchUpSeconds = 7 * 24 * 3600;
constexpr int kKeptRunsPerAutomation = 100;
constexpr int64_t kAutomationRunRetentionMillis = 30LL * 24 * 3600 * 1000;
// Counting missed cron slots stops here: the missed run then says "at least".
constexpr int kMissedCountCap = 100000;
// A slot the scheduler reaches this late is late, not missed, whatever the catch-up window.
constexpr int64_t kLateGraceMillis = 60'000;

Status WithFieldNamed(const Status& st, const FieldNames& names) {
  std::string field = names(st.field());
  std::string message = st.message();
  if (!st.field().empty() && message.rfind(st.field(), 0) == 0)
    message = field + message.substr(st.field().size());
  return Status(st.code(), message, field);
}

store::RunRecord NewAutomationRun(const store::AutomationRecord& a, const std::string& trigger,
                                  int64_t scheduled_at, int64_t now) {
  store::RunRecord r;
  r.id = NewId("run");
  r.org_id = a.org_id;
  r.automation_id = a.id;
  r.trigger = trigger;
  r.sandbox_id = a.sandbox_id;
  r.status = "starting";
  r.scheduled_at = scheduled_at;
  r.created_at = r.started_at = now;
  return r;
}

}  // namespace

AutomationService::AutomationService(store::AutomationStore& automations, store::JobStore& runs,
                                     AutomationRunner& runner, Clock clock)
    : automations_(automations), runs_(runs), runner_(runner), clock_(std::move(clock)) {}

AutomationService::~AutomationService() { Shutdown(); }

int64_t AutomationService::Now() const { return clock_ ? clock_() : NowMillis(); }

Automation AutomationService::ViewOf(const store::AutomationRecord& a) const {
  Automation view;
  static_cast<store::AutomationRecord&>(view) = a;
  for (auto& [name, value] : view.env) value.clear();
  if (a.kind == "controller") {
    auto windows = ControllerService::WindowsOf(a);
    if (a.enabled && windows.ok()) view.next_changes = windows->NextChanges(Now(), kNextRunsShown);
    return view;
  }
  if (a.enabled) {
    auto schedule = AutomationSchedule::Of(a.interval_seconds, a.cron, a.time_zone, a.created_at);
    if (schedule.ok()) {
      view.next_runs.push_back(a.next_due_at);
      for (int64_t t : schedule->Next(a.next_due_at, kNextRunsShown - 1))
        view.next_runs.push_back(t);
    }
  }
  return view;
}

Result<Automation> AutomationService::CreateSchedule(
    const Principal& who, const CreateAutomationRequest& req, const FieldNames& names,
    const std::optional<store::IdempotencyClaim>& claim) {
  if (!req.kind.empty() && req.kind != "schedule")
    return InvalidArgument(names("kind"), names("kind") + " must be schedule or controller");
  if (!req.desired_state.empty() || req.window_seconds) {
    std::string field = names(req.desired_state.empty() ? "window_seconds" : "desired_state");
    return InvalidArgument(field, field + " applies to " + names("kind") + " controller only");
  }
  if (req.name.size() > 128)
    return InvalidArgument(names("name"), names("name") + " must be at most 128 bytes");
  if (req.cron.size() > kMaxCronBytes) {
    return InvalidArgument(names("cron"), names("cron") + " must be at most " +
                                              std::to_string(kMaxCronBytes) + " bytes");
  }
  if (req.sandbox_id.empty())
    return InvalidArgument(names("sandbox_id"), names("sandbox_id") + " is required");
  int64_t timeout = req.timeout_seconds.value_or(600);
  if (timeout < 1 || timeout > 86400) {
    return InvalidArgument(names("timeout_seconds"),
                           names("timeout_seconds") + " must be between 1 and 86400");
  }
  RunCommandRequest command;
  command.argv = req.argv;
  command.cwd = req.cwd;
  command.env = req.env;
  command.timeout_seconds = static_cast<int>(timeout);
  command.wait_seconds = 0;
  if (Status st = ValidateRunCommand(command); !st.ok()) return WithFieldNamed(st, names);
  if (req.interval_seconds && *req.interval_seconds < 1) {
    return InvalidArgument(names("interval_seconds"),
                           names("interval_seconds") + " must be at least 1");
  }
  std::string overlap = req.overlap.empty() ? "skip" : req.overlap;
  if (overlap != "skip" && overlap != "buffer_one" && overlap != "allow" &&
      overlap != "cancel_previous") {
    return InvalidArgument(
        names("overlap"), names("overlap") + " must be skip, buffer_one, allow or cancel_previous");
  }
  int64_t max_attempts = req.max_attempts.value_or(kDefaultMaxAttempts);
  if (max_attempts < 1 || max_attempts > kMaxAttempts) {
    return InvalidArgument(
        names("max_attempts"),
        names("max_attempts") + " must be between 1 and " + std::to_string(kMaxAttempts));
  }
  int64_t catch_up = req.catch_up_seconds.value_or(3600);
  if (catch_up < 0 || catch_up > kMaxCatchUpSeconds) {
    return InvalidArgument(names("catch_up_seconds"),
                           names("catch_up_seconds") + " must be between 0 and 604800");
  }
  if (!req.time_zone.empty() && req.interval_seconds) {
    return InvalidArgument(names("time_zone"),
                           names("time_zone") + " applies to " + names("cron") + " only");
  }
  int64_t now = Now();
  ASSIGN_OR_RETURN(AutomationSchedule schedule,
                   AutomationSchedule::Of(req.interval_seconds.value_or(0), req.cron, req.time_zone,
                                          now, names));
  auto first = schedule.NextAfter(now);
  if (!first) return InvalidArgument(names("cron"), names("cron") + " never matches a date");
  if (Status st = runner_.CheckTarget(who.org_id, req.sandbox_id); !st.ok()) {
    if (st.code() == Code::kNotFound) return NotFound("sandbox '" + req.sandbox_id + "' not found");
    return st;
  }

  store::AutomationRecord a;
  a.id = NewId("aut");
  a.org_id = who.org_id;
  a.name = req.name.empty() ? a.id : req.name;
  a.sandbox_id = req.sandbox_id;
  a.argv = req.argv;
  a.cwd = req.cwd;
  a.env = req.env;
  a.timeout_seconds = static_cast<int>(timeout);
  a.interval_seconds = req.interval_seconds.value_or(0);
  a.cron = a.interval_seconds ? "" : req.cron;
  a.time_zone = a.interval_seconds ? "UTC" : (req.time_zone.empty() ? "UTC" : req.time_zone);
  a.overlap = overlap;
  a.catch_up_seconds = catch_up;
  a.max_attempts = static_cast<int>(max_attempts);
  a.next_due_at = *first;
  a.created_at = a.updated_at = now;
  return InsertAutomation(who, a, claim);
}

Result<Page<Automation>> AutomationService::List(const Principal& who, const PageRequest& page) {
  ASSIGN_OR_RETURN(std::vector<store::AutomationRecord> all,
                   automations_.ListAutomations(who.org_id));
  ASSIGN_OR_RETURN(Page<store::AutomationRecord> records,
                   PageNewestFirst(std::move(all), page,
                                   [](const store::AutomationRecord& a) { return a.seq; }));
  Page<Automation> out;
  for (const auto& a : records.items) out.items.push_back(ViewOf(a));
  out.next_cursor = records.next_cursor;
  return out;
}

Result<Automation> AutomationService::Get(const Principal& who, const std::string& id) {
  ASSIGN_OR_RETURN(store::AutomationRecord a, automations_.GetAutomation(who.org_id, id));
  return ViewOf(a);
}

Result<Automation> AutomationService::SetEnabled(const Principal& who, const std::string& id,
                                                 bool enabled, std::optional<int64_t> version) {
  ASSIGN_OR_RETURN(store::AutomationRecord a, automations_.GetAutomation(who.org_id, id));
  if (version && *version != a.version) {
    return Conflict("automation '" + id + "' is at version " + std::to_string(a.version) +
                    ", not " + std::to_string(*version) + ": read it again");
  }
  int64_t now = Now();
  int64_t read_version = a.version;
  if (enabled && !a.enabled) {
    if (Status st = runner_.CheckTarget(a.org_id, a.sandbox_id); !st.ok()) {
      return Conflict("automation '" + id + "' cannot resume: its sandbox '" + a.sandbox_id +
                      "' is gone");
    }
    if (a.kind == "controller") {
      a.next_due_at = now;  // reconciled at once
    } else {
      ASSIGN_OR_RETURN(
          AutomationSchedule schedule,
          AutomationSchedule::Of(a.interval_seconds, a.cron, a.time_zone, a.created_at));
      auto next = schedule.NextAfter(now);
      if (!next) return Conflict("automation '" + id + "' has no slot left");
      a.next_due_at = *next;
    }
    a.consecutive_failures = 0;
  }
  a.enabled = enabled;
  a.paused_reason.clear();
  a.updated_at = now;
  Status st = automations_.UpdateAutomation(a, read_version);
  if (st.code() == Code::kConflict) {
    return Conflict("automation '" + id + "' changed since version " +
                    std::to_string(read_version) + " was read: read it again");
  }
  RETURN_IF_ERROR(st);
  a.version = read_version + 1;
  Wake();
  return ViewOf(a);
}

Status AutomationService::Delete(const Principal& who, const std::string& id) {
  RETURN_IF_ERROR(automations_.DeleteAutomation(who.org_id, id));
  Wake();
  return Status::Ok();
}

Result<Run> AutomationService::Trigger(const Principal& who, const std::string& id,
                                       const std::optional<store::IdempotencyKey>& idempotency) {
  ASSIGN_OR_RETURN(std::optional<store::IdempotencyClaim> claim,
                   store::ClaimFor(who.org_id, "run", idempotency, Now()));
  if (claim) {
    ASSIGN_OR_RETURN(std::optional<std::string> earlier, runs_.FindIdempotentCreate(*claim));
    if (earlier) {
      auto run = runs_.GetRun(who.org_id, *earlier);
      if (!run.ok() && run.status().code() == Code::kNotFound)
        return store::IdempotentObjectGone("run " + *earlier);
      if (!run.ok()) return run.status();
      return Run{std::move(*run), std::nullopt};
    }
  }
  ASSIGN_OR_RETURN(store::AutomationRecord a, automations_.GetAutomation(who.org_id, id));
  if (a.kind == "controller") {
    return Conflict("automation '" + id +
                    "' is a controller: it acts when its sandbox drifts or a window opens or "
                    "closes, not on demand");
  }
  int64_t now = Now();
  store::RunRecord run = NewAutomationRun(a, "manual", now, now);
  bool start = Admitted(a, run) && MayStart(a, run);
  std::string run_id = run.id;
  bool stored_now = true;
  if (claim) {
    ASSIGN_OR_RETURN(store::IdempotentCreate made,
                     runs_.CreateOnce(*claim, [&]() -> Result<std::string> {
                       RETURN_IF_ERROR(runs_.PutRun(run));
                       return run.id;
                     }));
    // A concurrent request with the key recorded its run first: this one starts nothing.
    stored_now = !made.replayed;
    run_id = made.object_id;
  } else {
    RETURN_IF_ERROR(runs_.PutRun(run));
  }
  if (stored_now && start) Launch(a, run);
  if (stored_now && run.status == "queued") Buffer(a, run);
  // Skipped at once: no run's end prunes after it.
  if (stored_now && run.ended_at > 0) {
    if (auto pruned =
            runs_.PruneRuns("", a.id, now - kAutomationRunRetentionMillis, kKeptRunsPerAutomation);
        !pruned.ok())
      spdlog::error("automations: pruning runs: {}", pruned.status().message());
  }
  ASSIGN_OR_RETURN(store::RunRecord stored, runs_.GetRun(who.org_id, run_id));
  return Run{std::move(stored), std::nullopt};
}

bool AutomationService::Admitted(const store::AutomationRecord& a, store::RunRecord& run) {
  if (!admission_) return true;
  Status admitted = admission_(a.org_id);
  if (admitted.code() != Code::kPaymentRequired && admitted.code() != Code::kResourceExhausted)
    return true;
  run.status = "skipped_quota";
  run.error = RecordMessage(admitted);
  run.ended_at = run.started_at;
  return false;
}

void AutomationService::Launch(const store::AutomationRecord& a, store::RunRecord run) {
  {
    std::lock_guard lock(mu_);
    active_[run.id] = run;
    executing_[a.id].insert(run.id);
  }
  std::string run_id = run.id;
  JobAttempts::Progress progress;
  progress.command = [this, run_id](const std::string& command_id) {
    std::lock_guard lock(mu_);
    auto it = active_.find(run_id);
    if (it == active_.end()) return;
    it->second.command_id = command_id;
    it->second.status = "running";
    if (Status st = runs_.PutRun(it->second); !st.ok())
      spdlog::error("automations: recording run {}: {}", run_id, st.message());
    ADAPT_FAULT_POINT("automation.run.after_command");
  };
  runner_.Start(a, run, std::move(progress),
                [this, a, run_id](AttemptEnd end) { RunEnded(a, run_id, std::move(end)); });
}

void AutomationService::RunEnded(const store::AutomationRecord& a, const std::string& run_id,
                                 AttemptEnd end) {
  store::RunRecord run;
  int64_t now = Now();
  {
    std::lock_guard lock(mu_);
    auto it = active_.find(run_id);
    if (it == active_.end()) return;
    run = it->second;
    active_.erase(it);
    if (cancel_requested_.erase(run_id)) CountAsCancelled(end);
  }
  RecordAttemptEnd(run, end, now);
  // A catch_up run keeps the note of the slots it covers unless its end has more to say.
  if (!end.error.empty() || run.trigger != "catch_up") run.error = end.error;
  if (Status st = runs_.PutRun(run); !st.ok())
    spdlog::error("automations: recording run {}: {}", run.id, st.message());

  if (end.kind == AttemptEnd::Kind::kRefused && end.error == kTargetNotFound) {
    TargetGone(run.sandbox_id, "its sandbox '" + run.sandbox_id + "' no longer exists");
  } else if (end.kind == AttemptEnd::Kind::kInfrastructure && run.attempt < a.max_attempts &&
             Retry(a, run, now)) {
    // The slot's outcome is its last attempt's.
  } else if (end.kind != AttemptEnd::Kind::kCancelled && end.kind != AttemptEnd::Kind::kQuota) {
    bool failed = run.status != "succeeded";
    auto after = automations_.RecordAutomationOutcome(
        a.id, failed, kPauseAfterFailures,
        "paused after " + std::to_string(kPauseAfterFailures) + " consecutive failed runs", now);
    if (!after.ok() && after.status().code() != Code::kNotFound)
      spdlog::error("automations: recording {}'s run: {}", a.id, after.status().message());
  }
  if (auto pruned =
          runs_.PruneRuns("", a.id, now - kAutomationRunRetentionMillis, kKeptRunsPerAutomation);
      !pruned.ok())
    spdlog::error("automations: pruning runs: {}", pruned.status().message());
  // Only now does the automation stop executing: a slot due meanwhile met the overlap policy,
  // and one after an automatic pause is not claimed at all. A buffered run takes its place at
  // once (buffer_one), so that no slot starts beside it.
  std::optional<store::RunRecord> next;
  {
    std::lock_guard lock(mu_);
    auto it = executing_.find(a.id);
    if (it != executing_.end() && it->second.erase(run_id) && it->second.empty()) {
      auto waiting = buffered_.find(a.id);
      if (waiting == buffered_.end()) {
        executing_.erase(it);
      } else {
        next = std::move(waiting->second);
        buffered_.erase(waiting);
        it->second.insert(next->id);
      }
    }
  }
  if (next) StartBuffered(std::move(*next));
}

bool AutomationService::Retry(const store::AutomationRecord& a, const store::RunRecord& failed,
                              int64_t now) {
  store::AutomationRecord current;
  {
    std::lock_guard replacing(replace_mu_);
    auto read = automations_.GetAutomation(a.org_id, a.id);
    if (!read.ok() || !read->enabled) return false;
    current = *read;
    // Unless another run already replaced the target (then it retries there).
    if (current.sandbox_id == failed.sandbox_id) {
      auto fresh = runner_.Replace(a.org_id, failed.sandbox_id, a.id);
      if (!fresh.ok()) {
        if (fresh.status().code() == Code::kNotFound)
          TargetGone(failed.sandbox_id, "its sandbox '" + failed.sandbox_id +
                                            "' is gone: " + fresh.status().message());
        else if (fresh.status().code() != Code::kConflict)
          spdlog::warn("automations: {} not retried: {}", a.id, fresh.status().message());
        return false;
      }
      ADAPT_FAULT_POINT("automation.retry.after_replace");
      auto moved = automations_.FollowReplacedSandbox(failed.sandbox_id, *fresh, now);
      if (!moved.ok()) {
        spdlog::error("automations: following sandbox {}: {}", *fresh, moved.status().message());
        runner_.Discard(a.org_id, *fresh);
        return false;
      }
      ADAPT_FAULT_POINT("automation.retry.after_follow");
      runner_.Discard(a.org_id, failed.sandbox_id);
      current.sandbox_id = *fresh;
      current.version++;
      current.updated_at = now;
    }
  }
  store::RunRecord retry = NewAutomationRun(current, "retry", failed.scheduled_at, now);
  retry.attempt = failed.attempt + 1;
  bool start = Admitted(current, retry);
  if (Status st = runs_.PutRun(retry); !st.ok()) {
    spdlog::error("automations: recording run {}: {}", retry.id, st.message());
    return false;
  }
  if (start) Launch(current, retry);
  Wake();
  return true;
}

void AutomationService::TargetGone(const std::string& sandbox_id, const std::string& why) {
  auto paused = automations_.PauseAutomationsOfSandbox(sandbox_id, why, Now());
  if (!paused.ok()) spdlog::error("automations: pausing: {}", paused.status().message());
}

void AutomationService::WatchTargets(EventBus& bus, boost::asio::thread_pool& workers) {
  bus_ = &bus;
  bus_token_ = bus.Subscribe([this, &workers](const Change& change) {
    if (change.kind != Change::Kind::kSandboxStatus) return;
    boost::asio::post(workers,
                      Guarded("automations: checking target " + change.id, [this, id = change.id] {
                        // Any organization's: the id names one sandbox, whose
                        // automations are its own.
                        if (runner_.CheckTarget("", id).code() != Code::kNotFound) return;
                        TargetGone(id, "its sandbox '" + id + "' was deleted");
                      }));
  });
}

void AutomationService::Tick(int64_t now) {
  auto due = automations_.ListDueAutomations(now, kDuePerPass);
  if (!due.ok()) {
    spdlog::error("automations: reading due slots: {}", due.status().message());
    return;
  }
  std::vector<Firing> firings;
  std::vector<store::SlotClaim> claims;
  for (const auto& a : *due) {
    if (a.kind == "controller") {
      if (controllers_) controllers_->Due(a, now);
    } else if (auto firing = Plan(a, now)) {
      claims.push_back(std::move(firing->claim));  // the claim is the store's from here
      firings.push_back(std::move(*firing));
    }
  }
  if (claims.empty()) return;
  // The crash points of the slot claim (tests/reliability/test_crash_points.py): before it, the
  // restarted adaptd claims the slots; after it, their runs are settled, never fired again.
  ADAPT_FAULT_POINT("automation.fire.before_claim");
  // One transaction for the pass: with thousands of automations, a durable write per slot
  // would hold the scheduler back more than the launches do.
  std::vector<Status> claimed = automations_.ClaimAutomationSlots(claims);
  ADAPT_FAULT_POINT("automation.fire.after_claim");
  for (size_t i = 0; i < firings.size(); ++i) {
    Firing& f = firings[i];
    if (!claimed[i].ok()) {
      if (claimed[i].code() != Code::kConflict)
        spdlog::error("automations: claiming {}'s slot: {}", f.a.id, claimed[i].message());
      continue;
    }
    if (f.start) Launch(f.a, f.run);
    if (f.covered && f.run.status == "queued") Buffer(f.a, f.run);
  }
}

std::optional<AutomationService::Firing> AutomationService::Plan(const store::AutomationRecord& a,
                                                                 int64_t now) {
  auto schedule = AutomationSchedule::Of(a.interval_seconds, a.cron, a.time_zone, a.created_at);
  if (!schedule.ok()) {
    // Paused alone (the zone file went away): its slots cannot be computed.
    auto paused = automations_.RecordAutomationOutcome(
        a.id, true, 1, "its schedule can no longer be read: " + schedule.status().message(), now);
    if (!paused.ok()) spdlog::error("automations: pausing {}: {}", a.id, paused.status().message());
    return std::nullopt;
  }
  std::vector<store::RunRecord> records;
  int64_t window_start = now - a.catch_up_seconds * 1000 - kLateGraceMillis;
  int64_t slot = a.next_due_at;
  // Slots older than the catch-up window: one missed run says which.
  if (slot < window_start) {
    int64_t first = slot, last = slot, count = 0;
    while (slot < window_start && count < kMissedCountCap) {
      last = slot;
      ++count;
      auto next = schedule->NextAfter(slot);
      if (!next) break;
      slot = *next;
    }
    if (slot < window_start) {
      auto next = schedule->NextAfter(window_start - 1);
      slot = next ? *next : INT64_MAX;
    }
    store::RunRecord missed = NewAutomationRun(a, "schedule", first, now);
    missed.status = "missed";
    missed.error = std::string(count >= kMissedCountCap ? "at least " : "") +
                   std::to_string(count) + " slot(s) from " + FormatRfc3339(first) + " to " +
                   FormatRfc3339(last) + " were missed: adaptd was not running";
    missed.started_at = 0;
    missed.ended_at = now;
    records.push_back(missed);
  }
  // Slots inside the window: the latest stands for them all.
  int64_t latest = 0, covered = 0;
  while (slot <= now) {
    latest = slot;
    ++covered;
    auto next = schedule->NextAfter(slot);
    slot = next ? *next : INT64_MAX;
    if (covered > kMissedCountCap) {
      auto jump = schedule->NextAfter(now);
      slot = jump ? *jump : INT64_MAX;
    }
  }
  int64_t next_due = slot;
  bool start = false;
  store::RunRecord run;
  if (covered > 0) {
    run = NewAutomationRun(a, covered > 1 ? "catch_up" : "schedule", latest, now);
    if (covered > 1)
      run.error = "catches up " + std::to_string(covered) + " slot(s) missed since " +
                  FormatRfc3339(a.next_due_at < window_start ? window_start : a.next_due_at);
    start = Admitted(a, run) && MayStart(a, run);
    records.push_back(run);
  }
  store::SlotClaim claim{a.id, a.next_due_at, next_due, std::move(records)};
  // A skipped or missed slot ends its run here, where no run's end prunes after it: the claim
  // keeps the history to its bound (a schedule every second over a spent balance).
  for (const auto& r : claim.runs)
    if (r.ended_at > 0) claim.keep_runs = kKeptRunsPerAutomation;
  return Firing{a, std::move(claim), run, start, covered > 0};
}

void AutomationService::Start() {
  Recover();
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread(Guarded("automation scheduler", [this] { Loop(); }));
}

void AutomationService::Shutdown() {
  if (bus_) bus_->Unsubscribe(bus_token_);
  bus_ = nullptr;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void AutomationService::Wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  wake_.notify_all();
}

void AutomationService::Loop() {
  std::optional<int64_t> last_due;
  for (;;) {
    // Guarded too: an exception here would end the scheduler, and no automation would run.
    Result<std::optional<int64_t>> next = Internal("the next due time was not read");
    RunGuarded("automation scheduler's next due time",
               [&] { next = automations_.NextAutomationDue(); });
    int64_t now = Now();
    // Without an automation, or when the store cannot say, an hour (a change wakes it sooner).
    int64_t wait_ms = 3600 * 1000;
    if (next.ok() && next->has_value()) {
      // At most the hour: a controller without windows is never due.
      wait_ms = std::clamp<int64_t>(**next - now, 0, wait_ms);
      // The same slot still due after a pass (the store refused its claim): not a busy loop.
      if (wait_ms == 0 && last_due == **next) wait_ms = 1000;
      last_due = **next;
    }
    {
      std::unique_lock lock(mu_);
      if (stopping_) return;
      if (wait_ms > 0 && !woken_) {
        wake_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                       [this] { return stopping_ || woken_; });
      }
      if (stopping_) return;
      woken_ = false;
    }
    RunGuarded("automation scheduler pass", [this] { Tick(Now()); });
  }
}

}  // namespace adapt::core
