#include "storage/volume_request.h"

namespace adapt::storage {

using nlohmann::json;

Status ValidateVolumeName(const std::string& name, const std::string& field) {
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !name.empty() && name.size() <= limits::kNameMaxBytes && alnum(name.front()) &&
            alnum(name.back());
  for (char c : name) ok = ok && (alnum(c) || c == '-');
  if (!ok)
    return InvalidArgument(field, field +
                                      " must be 1 to 63 lower-case letters, digits or '-', "
                                      "starting and ending with a letter or digit");
  return Status::Ok();
}

Result<CreateVolumeRequest> ParseCreateVolume(const json& body) {
  if (!body.is_object()) return InvalidArgument("", "the request body must be a JSON object");
  for (const auto& [key, _] : body.items()) {
    if (key != "name" && key != "sizeMiB")
      return InvalidArgument(key, "unknown field '" + key + "'");
  }
  CreateVolumeRequest req;
  if (!body.contains("name") || !body["name"].is_string())
    return InvalidArgument("name", "name is required: the storage's name");
  req.name = body["name"];
  RETURN_IF_ERROR(ValidateVolumeName(req.name));
  if (body.contains("sizeMiB") && !body["sizeMiB"].is_null()) {
    const json& size = body["sizeMiB"];
    bool in_range = size.is_number_integer() && size.get<int64_t>() >= limits::kSizeMiBMin &&
                    size.get<int64_t>() <= limits::kSizeMiBMax;
    if (!in_range)
      return InvalidArgument("sizeMiB", "sizeMiB must be an integer between " +
                                            std::to_string(limits::kSizeMiBMin) + " and " +
                                            std::to_string(limits::kSizeMiBMax));
    req.size_mib = size.get<int64_t>();
  }
  return req;
}

Status CheckDeleteConfirmation(const std::string& name, const std::string& confirm) {
  if (name == kDefaultVolumeName) return Conflict("the default storage cannot be deleted");
  if (confirm != name)
    return InvalidArgument(
        "confirm", "deleting storage '" + name + "' is permanent: set confirm to exactly its name");
  return Status::Ok();
}

}  // namespace adapt::storage
