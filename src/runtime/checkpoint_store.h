// The checkpoint store: one encrypted filesystem that holds every checkpoint image (runsc's
// memory images hold the sandboxes' secrets) and every named checkpoint's copy of a disk. It
// is a sparse ext4 image in the state directory, loop-mounted with `discard` (a deleted
// checkpoint gives its blocks back to the host), whose one directory `data/` has an fscrypt v2
// policy under a key derived from the storage master key (HKDF, as volumes' keys are). The
// image file on the host disk holds only ciphertext; no key is stored.
#pragma once

#include <string>

#include "base/status.h"

namespace adapt::runtime {

struct CheckpointStorePaths {
  std::string image;  // <state>/checkpoint-store.img
  std::string mount;  // <state>/checkpoint-store
  std::string root;   // <mount>/data: the encrypted directory everything lives below
};

CheckpointStorePaths CheckpointStoreAt(const std::string& state_dir);

// HKDF-SHA512(master, salt "adapt-storage-v1", info "checkpoints"), an fscrypt key's size.
Result<std::string> DeriveCheckpointStoreKey(const std::string& master);

// Mounts the store (making its image on first use, as large as the filesystem holding it, so
// the host's disk fills before the store does) and unlocks `root` with `key`. A store made
// under another master key is an error that says so; nothing is changed then.
Status OpenCheckpointStore(const CheckpointStorePaths& paths, const std::string& key);

// Unmounts the store (lazily while a sandbox's restore still reads from it).
Status CloseCheckpointStore(const CheckpointStorePaths& paths);

// Moves directory `from` (on another filesystem) to `to` in the store: copied beside `to`,
// renamed, then `from` removed, so a crash leaves either the old or the whole new one, and a
// second call after a crash finishes the move.
Status MoveIntoCheckpointStore(const std::string& from, const std::string& to);

}  // namespace adapt::runtime
