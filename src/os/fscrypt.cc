#include "os/fscrypt.h"

#include <fcntl.h>
#include <linux/fscrypt.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "os/errno_status.h"
#include "os/unique_fd.h"

namespace adapt::os {
namespace {

fscrypt_policy_v2 PolicyFor(const std::string& identifier) {
  fscrypt_policy_v2 p;
  std::memset(&p, 0, sizeof p);
  p.version = FSCRYPT_POLICY_V2;
  p.contents_encryption_mode = FSCRYPT_MODE_AES_256_XTS;
  p.filenames_encryption_mode = FSCRYPT_MODE_AES_256_CTS;
  p.flags = FSCRYPT_POLICY_FLAGS_PAD_32;
  std::memcpy(p.master_key_identifier, identifier.data(), FSCRYPT_KEY_IDENTIFIER_SIZE);
  return p;
}

}  // namespace

Result<std::string> AddEncryptionKey(const std::string& mount_point, const std::string& raw_key) {
  if (raw_key.size() != kFscryptKeyBytes)
    return Internal("an fscrypt key must be " + std::to_string(kFscryptKeyBytes) + " bytes");
  UniqueFd dir(::open(mount_point.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return ErrnoStatus("opening " + mount_point);
  // struct fscrypt_add_key_arg ends in a flexible array holding the raw key.
  std::vector<unsigned char> buf(sizeof(fscrypt_add_key_arg) + raw_key.size(), 0);
  auto* arg = reinterpret_cast<fscrypt_add_key_arg*>(buf.data());
  arg->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
  arg->raw_size = static_cast<uint32_t>(raw_key.size());
  std::memcpy(arg->raw, raw_key.data(), raw_key.size());
  int rc = ::ioctl(dir.get(), FS_IOC_ADD_ENCRYPTION_KEY, arg);
  int err = errno;
  std::string id(reinterpret_cast<const char*>(arg->key_spec.u.identifier),
                 FSCRYPT_KEY_IDENTIFIER_SIZE);
  // The key must not linger in freed memory.
  ::explicit_bzero(buf.data(), buf.size());
  if (rc != 0) return ErrnoStatus("adding the encryption key of " + mount_point, err);
  return id;
}

Status SetEncryptionPolicy(const std::string& dir, const std::string& identifier) {
  if (identifier.size() != FSCRYPT_KEY_IDENTIFIER_SIZE)
    return Internal("an fscrypt key identifier must be 16 bytes");
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return ErrnoStatus("opening " + dir);
  fscrypt_policy_v2 p = PolicyFor(identifier);
  if (::ioctl(fd.get(), FS_IOC_SET_ENCRYPTION_POLICY, &p) == 0) return Status::Ok();
  return ErrnoStatus("setting the encryption policy of " + dir);
}

bool HasEncryptionPolicy(const std::string& dir, const std::string& identifier) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return false;
  fscrypt_get_policy_ex_arg arg;
  std::memset(&arg, 0, sizeof arg);
  arg.policy_size = sizeof(arg.policy);
  if (::ioctl(fd.get(), FS_IOC_GET_ENCRYPTION_POLICY_EX, &arg) != 0) return false;
  if (arg.policy.version != FSCRYPT_POLICY_V2) return false;
  fscrypt_policy_v2 want = PolicyFor(identifier);
  return std::memcmp(&arg.policy.v2, &want, sizeof want) == 0;
}

}  // namespace adapt::os
