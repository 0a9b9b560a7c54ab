// fscrypt (the kernel's file-based encryption, v2 policies): adding a filesystem's key and
// setting a directory's policy. Keys are passed in and never logged.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::os {

// The size of a raw fscrypt v2 master key (AES-256-XTS needs 64 bytes).
inline constexpr size_t kFscryptKeyBytes = 64;

// Adds `raw_key` (kFscryptKeyBytes) to the keyring of the filesystem mounted at
// `mount_point` and returns its 16-byte identifier (the kernel derives it from the key).
// Adding a key that is already there is not an error.
Result<std::string> AddEncryptionKey(const std::string& mount_point, const std::string& raw_key);

// Gives the empty directory `dir` a v2 policy (AES-256-XTS contents, AES-256-CTS file names,
// 32-byte name padding) under the key `identifier`. A directory that already has this policy
// is left as it is; one with another policy is an error.
Status SetEncryptionPolicy(const std::string& dir, const std::string& identifier);

// True when `dir` has a v2 policy under `identifier`.
bool HasEncryptionPolicy(const std::string& dir, const std::string& identifier);

}  // namespace adapt::os
