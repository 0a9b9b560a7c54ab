#include "core/command_view.h"

namespace adapt::core {

Command ViewOf(const store::CommandRecord& r) {
  Command c;
  c.id = r.id;
  c.sandbox_id = r.sandbox_id;
  c.status = r.status;
  c.argv = r.argv;
  c.cwd = r.cwd;
  c.user = r.user;
  c.timeout_seconds = r.timeout_seconds;
  c.exit_code = r.exit_code;
  c.signal = r.signal;
  c.stdout_text = r.stdout_text;
  c.stderr_text = r.stderr_text;
  c.truncated = r.truncated;
  c.started_at = r.created_at;
  c.finished_at = r.finished_at;
  c.termination_reason = r.termination_reason;
  c.error = r.error;
  c.served_by = r.served_by;
  return c;
}

}  // namespace adapt::core
