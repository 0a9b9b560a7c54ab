// UserStore: the people who sign in to organizations (email + password). One domain of Store
// (store/store.h): a service that needs only this domain depends on this interface, and a test
// can give it a MemoryStore. Every method is one transaction; implementations are thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "store/records.h"

namespace adapt::store {

class UserStore {
 public:
  virtual ~UserStore() = default;

  // Conflict when a user has this email (in any organization); NotFound when the org does not
  // exist.
  virtual Status CreateUser(const UserRecord& user) = 0;
  // Sign-up: the new organization and its first user in one transaction, so a refused user
  // (its email taken) leaves no organization behind. Conflict for a taken email or org name.
  virtual Status CreateOrgWithUser(const OrgRecord& org, const UserRecord& user) = 0;
  // NotFound when no user has this (normalized) email.
  virtual Result<UserRecord> FindUserByEmail(const std::string& email) = 0;
  // The organization's users, oldest first; every organization's when `org_id` is empty.
  virtual Result<std::vector<UserRecord>> ListUsers(const std::string& org_id) = 0;
  // NotFound unless a user has this id.
  virtual Result<UserRecord> GetUser(const std::string& id) = 0;
  // Deletes the user and every OAuth grant it made (key_id = its id) in one transaction,
  // returning what it was. NotFound for an unknown id; Conflict when it is its organization's
  // last user (the organization would have no one left to sign in as its owner).
  virtual Result<UserRecord> DeleteUser(const std::string& id) = 0;
  // Replaces the user's password hash and deletes its OAuth grants (signed in again with the
  // new password) in one transaction. NotFound for an unknown id.
  virtual Status SetUserPassword(const std::string& id, const std::string& password_hash) = 0;
};

}  // namespace adapt::store
