// Users: people who sign in to an organization with email and password (the OAuth authorize
// page of the MCP server), besides its API keys. The admin key adds and lists them; with
// sign-up enabled, a person may create an account: a new organization, unregistered
// (store::OrgRecord::registered) until register_user, with them as its first user.
// A user acts with the organization's rights, never the admin's (Principal::is_admin is false
// even for a user of the admin organization); the Principal's key_id is the user's id, so OAuth
// grants name the user they were made by. Thread-safe.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "base/list_cursor.h"
#include "base/status.h"
#include "core/auth.h"
#include "store/store.h"

namespace adapt::core {

// `email` trimmed and lower-cased; InvalidArgument (field "email") unless it looks like
// local@domain.tld, at most 254 characters, without spaces or control characters.
Result<std::string> NormalizeEmail(const std::string& email);
// InvalidArgument (field "password") for fewer than 10 or more than 1024 bytes.
Status CheckPassword(const std::string& password);

struct NewUser {
  store::UserRecord record;
  std::string password;  // set when the server chose it: shown once
};

class Users {
 public:
  // At most this many password hashes run at once (each holds 32 MiB); more answer Unavailable.
  static constexpr int kMaxConcurrentHashes = 4;

  explicit Users(store::Store& store);

  // Admin only. An empty `password` asks the server to choose one (returned once).
  Result<NewUser> Add(const Principal& who, const std::string& org_id, const std::string& email,
                      const std::string& password);
  // Admin only; every organization's users when `org_id` is empty. One newest-first page;
  // InvalidArgument for a bad limit or cursor.
  Result<Page<store::UserRecord>> List(const Principal& who, const std::string& org_id,
                                       const PageRequest& page = {});

  // Deletes a user and ends what it signed in with (its OAuth grants; dashboard sessions
  // read the user again). The admin key may delete any user, a caller of the user's own
  // organization (every user of an organization is an owner of it) its organization's; another
  // organization's id is NotFound. Conflict for the organization's last user.
  Result<store::UserRecord> Delete(const Principal& who, const std::string& id);
  // Sets a user's password and ends its OAuth grants. The admin key needs no
  // `current_password`; the user itself must give it (PermissionDenied when wrong); another
  // caller of its organization is PermissionDenied, another organization's NotFound.
  Status ChangePassword(const Principal& who, const std::string& id, const std::string& password,
                        const std::string& current_password);

  // The Principal of the user with this email and password. An unknown email and a wrong
  // password answer the same Unauthenticated sentence after the same work (a hash is checked
  // either way), so the answer does not tell which emails have accounts.
  Result<Principal> SignIn(const std::string& email, const std::string& password);
  // Creates an unregistered organization with this user as its first member. Conflict when the
  // email has an account already.
  Result<Principal> SignUp(const std::string& email, const std::string& password);

 private:
  Result<std::string> Hash(const std::string& password);

  store::Store& store_;
  std::string decoy_hash_;  // checked for unknown emails, so they cost what a real user costs
  std::atomic<int> hashing_{0};
};

}  // namespace adapt::core
