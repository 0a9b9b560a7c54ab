#include "core/sandbox_view.h"

#include "base/redaction.h"
#include "base/text.h"
#include "core/sandbox_hibernation.h"

namespace adapt::core {

std::vector<std::string> RedactionValues(const store::SandboxRecord& r) {
  std::vector<std::string> values;
  for (const auto& [_, v] : r.env) {
    if (v.size() >= 3) values.push_back(v);
  }
  return values;
}

void ApplyOutput(const store::SandboxRecord& r, const runtime::OutputRing& output, bool open,
                 store::SandboxResult& result) {
  auto secrets = RedactionValues(r);
  auto text = [&](runtime::Stream stream) {
    std::string bytes = output.Text(stream);
    std::string_view kept = bytes;
    if (open) {
      kept.remove_suffix(PartialUtf8AtEnd(kept));
      kept.remove_suffix(SecretStartAtEnd(kept, secrets));
    }
    // The ring drops whole chunks, none of them kept for context: once it did, a start that
    // could end a secret is hidden.
    return RedactWindow(kept, 0, secrets, output.truncated());
  };
  result.stdout_text = text(runtime::Stream::kStdout);
  result.stderr_text = text(runtime::Stream::kStderr);
  result.truncated = output.truncated();
}

Sandbox ViewOf(const store::SandboxRecord& r, const runtime::OutputRing* live) {
  Sandbox s;
  s.id = r.id;
  s.status = r.status;
  s.created_at = r.created_at;
  s.updated_at = r.updated_at;
  s.expires_at = r.expires_at;
  s.deleted_at = r.deleted_at;
  s.config = r.config;
  if (!r.termination_reason.empty()) s.termination_reason = r.termination_reason;
  if (!r.error.empty()) s.error = r.error;
  s.hibernation = HibernationOf(r);
  for (const auto& [name, _] : r.env) {
    EnvironmentSource source{name, "env", std::nullopt};
    for (const auto& secret : r.config.secrets)
      if (secret.name == name) source = {name, "secret", secret.version};
    s.environment.push_back(source);
  }
  if (!r.config.startup) return s;
  store::SandboxResult result = r.result;
  if (live) ApplyOutput(r, *live, true, result);
  StartupView& v = s.startup.emplace();
  v.settings = *r.config.startup;
  v.exit_code = result.exit_code;
  v.signal = result.signal;
  v.error = result.error;
  v.started_at = result.started_at;
  v.finished_at = result.finished_at;
  v.stdout_text = result.stdout_text;
  v.stderr_text = result.stderr_text;
  v.truncated = result.truncated;
  return s;
}

}  // namespace adapt::core
