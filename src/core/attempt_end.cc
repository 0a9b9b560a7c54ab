// What the end of an attempt means for its run, the same for a job's and an automation's.
#include "core/job_attempt.h"

namespace adapt::core {

std::string LatestBytes(const std::string& text, size_t limit, bool& truncated) {
  if (text.size() <= limit) return text;
  truncated = true;
  size_t start = text.size() - limit;
  // Skip continuation bytes, so the kept text starts at a character.
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

void CountAsCancelled(AttemptEnd& end) {
  if (end.kind != AttemptEnd::Kind::kExited || !end.exit_code.has_value())
    end.kind = AttemptEnd::Kind::kCancelled;
}

std::string RunStatusOf(const AttemptEnd& end) {
  switch (end.kind) {
    case AttemptEnd::Kind::kExited:
      return end.exit_code == 0 ? "succeeded" : "failed";
    case AttemptEnd::Kind::kTimedOut:
    case AttemptEnd::Kind::kRefused:
      return "failed";
    case AttemptEnd::Kind::kQuota:
      return "skipped_quota";
    case AttemptEnd::Kind::kCancelled:
      return "cancelled";
    case AttemptEnd::Kind::kInfrastructure:
      return "infrastructure_failed";
  }
  return "failed";
}

void RecordAttemptEnd(store::RunRecord& run, const AttemptEnd& end, int64_t now) {
  run.status = RunStatusOf(end);
  run.exit_code = end.exit_code;
  if (!end.command_id.empty()) run.command_id = end.command_id;
  bool stdout_truncated = end.stdout_truncated, stderr_truncated = end.stderr_truncated;
  run.stdout_text = LatestBytes(end.stdout_text, kRunOutputBytes, stdout_truncated);
  run.stderr_text = LatestBytes(end.stderr_text, kRunOutputBytes, stderr_truncated);
  run.stdout_truncated = stdout_truncated;
  run.stderr_truncated = stderr_truncated;
  run.ended_at = now;
}

}  // namespace adapt::core
