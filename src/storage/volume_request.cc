#include "storage/volume_request.h"

namespace adapt::storage {

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

Result<CreateVolumeRequest> CheckCreateVolume(CreateVolumeRequest request) {
  RETURN_IF_ERROR(ValidateVolumeName(request.name));
  int64_t size = request.size_mib.value_or(limits::kSizeMiBDefault);
  if (size < limits::kSizeMiBMin || size > limits::kSizeMiBMax)
    return InvalidArgument("size_mib", "size_mib must be between " +
                                           std::to_string(limits::kSizeMiBMin) + " and " +
                                           std::to_string(limits::kSizeMiBMax) + " MiB");
  request.size_mib = size;
  return request;
}

Status CheckDeleteConfirmation(const std::string& name, const std::string& confirm) {
  if (name == kDefaultVolumeName) return Conflict("the default storage cannot be deleted");
  if (confirm != name)
    return InvalidArgument(
        "confirm", "deleting storage '" + name + "' is permanent: set confirm to exactly its name");
  return Status::Ok();
}

}  // namespace adapt::storage
