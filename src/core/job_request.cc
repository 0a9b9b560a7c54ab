#include "core/job_request.h"

#include "core/command_request.h"

namespace adapt::core {

CreateSandbox AttemptSandbox(const SubmitJob& req) {
  CreateSandbox sandbox = req.sandbox;
  sandbox.startup_class = "instant";
  sandbox.ttl_seconds = req.timeout_seconds.value_or(kJobTimeoutSecondsDefault);
  return sandbox;
}

Result<ValidJob> ValidateSubmitJob(const SubmitJob& req, const std::string& default_image,
                                   const FieldNames& names) {
  if (req.sandbox.network &&
      (req.sandbox.network->allow || req.sandbox.network->hostnames || req.sandbox.network->dns)) {
    return Unsupported(names("network"),
                       names("network") + " of a job takes egress only (open or none)");
  }
  int64_t timeout = req.timeout_seconds.value_or(kJobTimeoutSecondsDefault);
  if (timeout < 1 || timeout > 86400) {
    return InvalidArgument(names("timeout_seconds"),
                           names("timeout_seconds") + " must be between 1 and 86400");
  }
  int64_t attempts = req.max_attempts.value_or(kJobMaxAttemptsDefault);
  if (attempts < kJobMaxAttemptsMin || attempts > kJobMaxAttemptsMax) {
    return InvalidArgument(names("max_attempts"),
                           names("max_attempts") + " must be between 1 and 10");
  }
  ASSIGN_OR_RETURN(NewSandbox valid,
                   ValidateCreateSandbox(AttemptSandbox(req), default_image, names));

  RunCommandRequest command;
  command.argv = req.argv;
  command.cwd = req.cwd;
  command.timeout_seconds = static_cast<int>(timeout);
  command.wait_seconds = 0;
  if (Status st = ValidateRunCommand(command); !st.ok()) {
    std::string field = names(st.field());
    std::string message = st.message();
    if (message.rfind(st.field(), 0) == 0) message = field + message.substr(st.field().size());
    return Status(st.code(), message, field);
  }

  ValidJob out;
  out.spec.image = valid.config.image;
  out.spec.cpu = valid.config.cpu;
  out.spec.memory_mib = valid.config.memory_mib;
  out.spec.disk_mib = valid.config.disk_mib;
  out.spec.egress = valid.config.network.egress;
  out.spec.env = valid.env;
  out.spec.secrets = valid.secrets;
  out.spec.argv = req.argv;
  out.spec.cwd = req.cwd;
  out.spec.timeout_seconds = static_cast<int>(timeout);
  out.max_attempts = static_cast<int>(attempts);
  return out;
}

}  // namespace adapt::core
