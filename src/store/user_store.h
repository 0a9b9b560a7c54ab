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
};

}  // namespace adapt::store
