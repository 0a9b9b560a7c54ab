// Status and Result<T>: errors are values, carried up with added context.
// A Status is cheap to copy when OK; its code says what kind of failure it is,
// and only api/ and mcp/ turn that code into an HTTP status or JSON-RPC error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace adapt {

enum class Code {
  kOk,
  kInvalidArgument,    // the caller sent something malformed or out of range
  kUnauthenticated,    // no or unknown credentials
  kPermissionDenied,   // credentials valid, action not allowed
  kNotFound,           // no such object (also: another organization's object)
  kConflict,           // the object's state forbids the action
  kPayloadTooLarge,    // request body over the limit
  kUnsupported,        // a valid value this deployment cannot honour (yet)
  kResourceExhausted,  // quota or capacity
  kPaymentRequired,    // the organization's prepaid balance is used up
  kUnavailable,        // try again later
  kInternal,           // a bug or an OS failure
};

// [[nodiscard]]: a Status dropped on the floor is a lost error. Handle it, or discard it with
// IgnoreError (base/ignore_error.h) and say why.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The request field the error is about, empty when none.
  const std::string& field() const { return field_; }
  // What a client is told instead of message() when the message names the host's resources
  // (a path under adaptd's state directory, a device): set where such a message is made (the
  // OS layer); empty when the message itself is fit for clients. ClientMessage reads it.
  const std::string& client_message() const { return client_message_; }

  // Returns this status with `context` prepended: "context: message". The client's sentence
  // stays as it was: context is written for the operator.
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    Status with(code_, context + ": " + message_, field_);
    with.client_message_ = client_message_;
    return with;
  }

  // Returns this status with `code` instead; message, field and client sentence stay. One made
  // from an internal failure needs a client sentence of its own: its message was written for
  // the operator, and only an internal failure's message is kept from clients.
  Status WithCode(Code code) const {
    Status with = *this;
    with.code_ = code;
    return with;
  }

  // Returns this status about request field `field`; the rest stays.
  Status WithField(std::string field) const {
    Status with = *this;
    with.field_ = std::move(field);
    return with;
  }

  // Returns this status with `sentence` as what clients are told instead of its message.
  Status WithClientMessage(std::string sentence) const {
    Status with = *this;
    with.client_message_ = std::move(sentence);
    return with;
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string field_;
  std::string client_message_;
};

inline Status InvalidArgument(std::string field, std::string message) {
  return Status(Code::kInvalidArgument, std::move(message), std::move(field));
}
inline Status NotFound(std::string message) { return Status(Code::kNotFound, std::move(message)); }
inline Status Conflict(std::string message) { return Status(Code::kConflict, std::move(message)); }
inline Status Internal(std::string message) { return Status(Code::kInternal, std::move(message)); }
inline Status Unsupported(std::string field, std::string message) {
  return Status(Code::kUnsupported, std::move(message), std::move(field));
}

// Result<T> holds either a value or a non-OK Status. Built from an OK Status (a bug: there is
// no value to hold) it holds an Internal error that says so, in every build type, so that the
// caller fails cleanly instead of reading a value that is not there.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status)                      // NOLINT
      : v_(status.ok() ? Internal("a Result was built from an OK Status, without a value")
                       : std::move(status)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace adapt

#define ADAPT_CONCAT_INNER(a, b) a##b
#define ADAPT_CONCAT(a, b) ADAPT_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define RETURN_IF_ERROR(expr)     \
  do {                            \
    ::adapt::Status _st = (expr); \
    if (!_st.ok()) return _st;    \
  } while (0)

// ASSIGN_OR_RETURN(auto x, Fn()) unwraps a Result or returns its Status.
#define ASSIGN_OR_RETURN(lhs, expr) ASSIGN_OR_RETURN_IMPL(ADAPT_CONCAT(_res_, __LINE__), lhs, expr)
#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()
