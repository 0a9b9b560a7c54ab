#include "base/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace adapt {
namespace {

TEST(Status, DefaultIsOk) {
  Status st;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.code(), Code::kOk);
  EXPECT_TRUE(st.message().empty());
  EXPECT_TRUE(st.field().empty());
  EXPECT_TRUE(Status::Ok().ok());
}

TEST(Status, CarriesCodeMessageAndField) {
  Status st = InvalidArgument("memoryMiB", "memoryMiB must be between 128 and 65536");
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "memoryMiB must be between 128 and 65536");
  EXPECT_EQ(st.field(), "memoryMiB");
  EXPECT_EQ(NotFound("x").code(), Code::kNotFound);
  EXPECT_EQ(Conflict("x").code(), Code::kConflict);
  EXPECT_EQ(Internal("x").code(), Code::kInternal);
  EXPECT_EQ(Unsupported("gpu", "x").code(), Code::kUnsupported);
  EXPECT_EQ(Unsupported("gpu", "x").field(), "gpu");
}

TEST(Status, WithContextPrependsAndKeepsCodeAndField) {
  Status st = InvalidArgument("cpu", "too many").WithContext("creating sandbox");
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.message(), "creating sandbox: too many");
  EXPECT_EQ(st.field(), "cpu");
  Status twice = NotFound("manifest").WithContext("fetching").WithContext("pulling python:3.12");
  EXPECT_EQ(twice.message(), "pulling python:3.12: fetching: manifest");
}

// A status re-coded or re-fielded keeps what its client is told: made anew from its message,
// a host path behind an OS failure's client sentence reached the tenant.
TEST(Status, WithCodeAndWithFieldKeepTheClientSentence) {
  Status os = Status(Code::kInternal, "reading /var/lib/adapt/sandboxes/x/config.json: gone")
                  .WithClientMessage("no such file or directory");
  Status recoded = os.WithCode(Code::kUnavailable);
  EXPECT_EQ(recoded.code(), Code::kUnavailable);
  EXPECT_EQ(recoded.message(), os.message());
  EXPECT_EQ(recoded.client_message(), "no such file or directory");
  Status fielded = recoded.WithField("image");
  EXPECT_EQ(fielded.field(), "image");
  EXPECT_EQ(fielded.code(), Code::kUnavailable);
  EXPECT_EQ(fielded.client_message(), "no such file or directory");
  EXPECT_EQ(recoded.WithContext("starting a replica").client_message(),
            "no such file or directory");
}

TEST(Status, WithContextOnOkStaysOkAndEmpty) {
  Status st = Status::Ok().WithContext("anything");
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(st.message().empty());
}

TEST(Result, HoldsAValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 42);
  EXPECT_EQ(r.value(), 42);
}

TEST(Result, BuiltFromAnOkStatusHoldsAnInternalErrorNotAValue) {
  Result<int> r = Status::Ok();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
  EXPECT_NE(r.status().message().find("OK Status"), std::string::npos);
}

TEST(Result, BuiltFromAnErrorKeepsIt) {
  Result<int> r = NotFound("no such sandbox");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "no such sandbox");
}

TEST(Result, StatusOfAValueIsOk) {
  Result<std::string> r = std::string("v");
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.status().code(), Code::kOk);
}

TEST(Result, HoldsAnError) {
  Result<std::string> r = Conflict("busy");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kConflict);
  EXPECT_EQ(r.status().message(), "busy");
}

TEST(Result, ArrowAndMoveOutOfValue) {
  Result<std::string> r = std::string("hello");
  EXPECT_EQ(r->size(), 5u);
  std::string moved = std::move(r).value();
  EXPECT_EQ(moved, "hello");
}

TEST(Result, WorksWithMoveOnlyTypes) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  EXPECT_EQ(*p, 7);
}

Status FailIf(bool fail) { return fail ? Internal("boom") : Status::Ok(); }

Status TwoSteps(bool fail_first, bool fail_second, int& reached) {
  reached = 0;
  RETURN_IF_ERROR(FailIf(fail_first));
  reached = 1;
  RETURN_IF_ERROR(FailIf(fail_second).WithContext("second"));
  reached = 2;
  return Status::Ok();
}

TEST(ReturnIfError, ContinuesOnOkAndReturnsTheFirstError) {
  int reached = -1;
  EXPECT_TRUE(TwoSteps(false, false, reached).ok());
  EXPECT_EQ(reached, 2);

  Status st = TwoSteps(true, false, reached);
  EXPECT_EQ(st.code(), Code::kInternal);
  EXPECT_EQ(st.message(), "boom");
  EXPECT_EQ(reached, 0);

  st = TwoSteps(false, true, reached);
  EXPECT_EQ(st.message(), "second: boom");
  EXPECT_EQ(reached, 1);
}

Result<int> Parse(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
    return InvalidArgument("n", "not a number: '" + s + "'");
  return std::stoi(s);
}

Result<int> Sum(const std::string& a, const std::string& b) {
  ASSIGN_OR_RETURN(int x, Parse(a));
  ASSIGN_OR_RETURN(int y, Parse(b));
  return x + y;
}

TEST(AssignOrReturn, UnwrapsValuesAndPropagatesErrors) {
  Result<int> ok = Sum("2", "40");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 42);

  Result<int> bad = Sum("2", "x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.status().field(), "n");
  EXPECT_EQ(bad.status().message(), "not a number: 'x'");
}

Result<std::unique_ptr<int>> MakeBox(bool fail) {
  if (fail) return NotFound("no box");
  return std::make_unique<int>(5);
}

Status UseBox(bool fail, int& out) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(fail));
  out = *box;
  return Status::Ok();
}

TEST(AssignOrReturn, MovesMoveOnlyValuesAndReturnsStatusFromAStatusFunction) {
  int out = 0;
  EXPECT_TRUE(UseBox(false, out).ok());
  EXPECT_EQ(out, 5);
  Status st = UseBox(true, out);
  EXPECT_EQ(st.code(), Code::kNotFound);
}

}  // namespace
}  // namespace adapt
