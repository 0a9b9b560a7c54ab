// ValidateCreateSandbox: values, defaults and field names (the REST mapper's JSON checks are
// in api/sandbox_json_test.cc).
#include "core/sandbox_request.h"

#include <gtest/gtest.h>

namespace adapt::core {
namespace {

// A create with one field set (no designated initializers: -Wmissing-field-initializers).
template <typename F>
CreateSandbox With(F set) {
  CreateSandbox req;
  set(req);
  return req;
}

Status ErrorOf(const CreateSandbox& req, const FieldNames& names = {}) {
  auto r = ValidateCreateSandbox(req, "debian:12", names);
  return r.ok() ? Status::Ok() : r.status();
}

TEST(ValidateCreateSandbox, FillsTheDefaults) {
  auto r = ValidateCreateSandbox({}, "debian:12");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.cpu, 1);
  EXPECT_EQ(r->config.memory_mib, 1024);
  EXPECT_EQ(r->config.disk_mib, 2048);
  EXPECT_EQ(r->config.ttl_seconds, 3600);
  EXPECT_EQ(r->config.image, "debian:12");
  EXPECT_EQ(r->config.network.egress, "open");
  EXPECT_FALSE(r->config.startup.has_value());
  EXPECT_EQ(r->config.security_profile, "restricted");
  EXPECT_EQ(r->config.startup_class, "instant");
  EXPECT_FALSE(r->config.storage.has_value());
}

TEST(ValidateCreateSandbox, ErrorsNameTheFieldInTheCoresTerms) {
  Status st = ErrorOf(With([](auto& r) { r.memory_mib = 64; }));
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_EQ(st.field(), "memory_mib");
  EXPECT_EQ(st.message(), "memory_mib must be between 128 and 65536");
}

TEST(ValidateCreateSandbox, ErrorsNameTheFieldAsTheCallerDoes) {
  FieldNames rest({{"memory_mib", "memoryMiB"}, {"startup_class", "startupClass"}});
  Status st = ErrorOf(With([](auto& r) { r.memory_mib = 70000; }), rest);
  EXPECT_EQ(st.field(), "memoryMiB");
  EXPECT_EQ(st.message(), "memoryMiB must be between 128 and 65536");
  Status storage = ErrorOf(With([](auto& r) {
                             r.startup_class = "instant";
                             r.storage = "data";
                           }),
                           rest);
  EXPECT_EQ(storage.field(), "storage");
  EXPECT_NE(storage.message().find("use startupClass durable"), std::string::npos)
      << storage.message();
}

TEST(ValidateCreateSandbox, ALabelWithNulIsToldSoNotThatItIsTooLong) {
  Status value = ErrorOf(With([](auto& r) { r.labels = {{"name", std::string("a\0b", 3)}}; }));
  EXPECT_EQ(value.field(), "labels.name");
  EXPECT_EQ(value.message(), "label values must not contain NUL");
  Status key = ErrorOf(With([](auto& r) { r.labels = {{std::string("a\0b", 3), "x"}}; }));
  EXPECT_EQ(key.message(), "label keys must not contain NUL");
  Status longer = ErrorOf(With([](auto& r) { r.labels = {{"name", std::string(257, 'x')}}; }));
  EXPECT_EQ(longer.message(), "label values must be at most 256 bytes");
}

// Seed 001: the environment "must fit the command limit of 32 KiB". Refused at the create (or
// a job's submit), whatever the startup mode: an interactive sandbox's env is every command's.
TEST(ValidateCreateSandbox, AnEnvironmentPastTheThirtyTwoKibCommandLimitIsRefused) {
  auto sized = [](size_t value_bytes) {  // "V=" + value + NUL: value_bytes + 3
    return With([=](auto& r) { r.env = {{"V", std::string(value_bytes, 'x')}}; });
  };
  EXPECT_TRUE(ErrorOf(sized(32 * 1024 - 3)).ok());
  Status over = ErrorOf(sized(32 * 1024 - 2));
  EXPECT_EQ(over.code(), Code::kInvalidArgument);
  EXPECT_EQ(over.field(), "env");
  EXPECT_NE(over.message().find("32 KiB"), std::string::npos) << over.message();
}

// A caller's labels may not use the reserved prefix; adaptd's own (platform_labels) are
// added after the caller's were checked, and carried over only as the caller's are not.
TEST(ValidateCreateSandbox, OnlyAdaptdSetsPlatformLabels) {
  Status caller = ErrorOf(With([](auto& r) { r.labels = {{"platform.automation", "aut_x"}}; }));
  EXPECT_EQ(caller.code(), Code::kInvalidArgument);
  EXPECT_EQ(caller.field(), "labels.platform.automation");
  auto made = ValidateCreateSandbox(With([](auto& r) {
                                      r.labels = {{"name", "a"}};
                                      r.platform_labels = {{"platform.app", "app_x"}};
                                    }),
                                    "debian:12", {});
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->config.labels,
            (std::map<std::string, std::string>{{"name", "a"}, {"platform.app", "app_x"}}));
  EXPECT_EQ(CallerLabels(made->config.labels), (std::map<std::string, std::string>{{"name", "a"}}));
}

TEST(ValidateCreateSandbox, NamingStorageAsksForADurableSandbox) {
  auto r = ValidateCreateSandbox(With([](auto& r) { r.storage = "data"; }), "debian:12");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->config.startup_class, "durable");
  EXPECT_EQ(r->config.storage, "data");
  auto durable =
      ValidateCreateSandbox(With([](auto& r) { r.startup_class = "durable"; }), "debian:12");
  ASSERT_TRUE(durable.ok());
  EXPECT_EQ(durable->config.storage, "default");
}

TEST(ValidateCreateSandbox, NoExpiryHasNoTtl) {
  auto r = ValidateCreateSandbox(With([](auto& r) { r.no_expiry = true; }), "debian:12");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->config.ttl_seconds.has_value());
}

TEST(ValidateCreateSandbox, AGpuIsUnsupported) {
  EXPECT_EQ(ErrorOf(With([](auto& r) { r.gpu = true; })).code(), Code::kUnsupported);
}

}  // namespace
}  // namespace adapt::core
