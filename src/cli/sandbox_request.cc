#include "cli/sandbox_request.h"

#include <charconv>
#include <cstdint>

#include "base/key_value.h"

namespace adapt::cli {
namespace {

Status UsageError(std::string_view flag, std::string_view problem) {
  return Status(Code::kInvalidArgument, std::string(flag) + ": " + std::string(problem));
}

// Sets body[name] from an integer flag when it was given.
Status SetInteger(nlohmann::json& body, const char* name, std::string_view flag,
                  const std::string& text) {
  if (text.empty()) return Status::Ok();
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return UsageError(flag, "expected an integer, got '" + text + "'");
  }
  body[name] = value;
  return Status::Ok();
}

// Merges KEY=VALUE pairs into body[name], keeping keys of --data that no flag repeats.
Status MergePairs(nlohmann::json& body, const char* name, std::string_view flag,
                  const std::vector<std::string>& pairs) {
  if (pairs.empty()) return Status::Ok();
  nlohmann::json& map = body[name];
  if (!map.is_object()) map = nlohmann::json::object();
  for (const std::string& text : pairs) {
    ASSIGN_OR_RETURN(auto pair, ParseKeyValue(flag, text));
    map[pair.first] = pair.second;
  }
  return Status::Ok();
}

nlohmann::json& ObjectMember(nlohmann::json& body, const char* name) {
  nlohmann::json& member = body[name];
  if (!member.is_object()) member = nlohmann::json::object();
  return member;
}

}  // namespace

Result<std::pair<std::string, std::string>> ParseKeyValue(std::string_view flag,
                                                          std::string_view text) {
  auto pair = SplitKeyValue(text);
  if (!pair) return UsageError(flag, "expected KEY=VALUE, got '" + std::string(text) + "'");
  return *std::move(pair);
}

Result<nlohmann::json> ParseDataDocument(std::string_view text, std::string_view source) {
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return UsageError("--data", "invalid JSON in " + std::string(source) + ": " + e.what());
  }
  if (!parsed.is_object()) {
    return UsageError("--data", std::string(source) + " must hold a JSON object");
  }
  return parsed;
}

Result<nlohmann::json> BuildCreateBody(const SandboxCreateFlags& flags,
                                       const nlohmann::json& data) {
  if (!data.is_null() && !data.is_object()) return UsageError("--data", "expected a JSON object");
  nlohmann::json body = data.is_null() ? nlohmann::json::object() : data;

  RETURN_IF_ERROR(SetInteger(body, "cpu", "--cpu", flags.cpu));
  RETURN_IF_ERROR(SetInteger(body, "memoryMiB", "--memory", flags.memory_mib));
  RETURN_IF_ERROR(SetInteger(body, "diskMiB", "--disk", flags.disk_mib));
  if (flags.ttl == "none" || flags.ttl == "null") {
    body["ttlSeconds"] = nullptr;
  } else {
    RETURN_IF_ERROR(SetInteger(body, "ttlSeconds", "--ttl", flags.ttl));
  }
  RETURN_IF_ERROR(SetInteger(body, "idleTimeoutSeconds", "--idle-timeout", flags.idle_timeout));
  RETURN_IF_ERROR(MergePairs(body, "labels", "--label", flags.labels));
  RETURN_IF_ERROR(MergePairs(body, "env", "--env", flags.env));
  if (!flags.image.empty()) {
    body["image"] = flags.image;
    body.erase("imageId");  // the two are alternatives; the flag names the one wanted
  }
  if (!flags.egress.empty()) ObjectMember(body, "network")["egress"] = flags.egress;
  if (!flags.storage.empty()) body["storage"] = flags.storage;
  if (!flags.gpu.empty()) body["gpu"] = {{"type", flags.gpu}};
  if (!flags.from_checkpoint.empty()) body["fromCheckpoint"] = flags.from_checkpoint;
  if (flags.database) body["database"] = true;
  if (!flags.startup_class.empty()) {
    if (flags.startup_class != "durable" && flags.startup_class != "instant") {
      return UsageError("--startup-class",
                        "expected durable or instant, got '" + flags.startup_class + "'");
    }
    body["startupClass"] = flags.startup_class;
  }
  if (!flags.security_profile.empty()) {
    if (flags.security_profile != "restricted" && flags.security_profile != "developer") {
      return UsageError("--security-profile",
                        "expected restricted or developer, got '" + flags.security_profile + "'");
    }
    body["securityProfile"] = flags.security_profile;
  }

  if (flags.run_image && flags.command) {
    return UsageError("--run-image", "cannot be combined with a command after --");
  }
  if (flags.run_image) {
    nlohmann::json& startup = ObjectMember(body, "startup");
    startup["mode"] = "image";
    startup.erase("argv");
  } else if (flags.command) {
    nlohmann::json& startup = ObjectMember(body, "startup");
    startup["mode"] = "command";
    startup["argv"] = *flags.command;
  }
  return body;
}

}  // namespace adapt::cli
