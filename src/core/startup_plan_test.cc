#include "core/startup_plan.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/sandbox_request.h"
#include "os/files.h"
#include "os/temp_dir.h"

namespace adapt::core {
namespace {

using nlohmann::json;

class StartupPlanTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(os::MakeDirs(rootfs_ + "/etc").ok());
    ASSERT_TRUE(os::WriteFileAtomic(rootfs_ + "/etc/passwd",
                                    "root:x:0:0:root:/root:/bin/bash\n"
                                    "app:x:1000:1000:App User:/home/app:/bin/sh\n"
                                    "svc:x:2000:3000::/srv/svc:/usr/sbin/nologin\n"
                                    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
                    .ok());
    ASSERT_TRUE(os::WriteFileAtomic(rootfs_ + "/etc/group",
                                    "root:x:0:\n"
                                    "staff:x:50:app\n"
                                    "app:x:1000:\n"
                                    "services:x:3000:\n")
                    .ok());
    image_.reference = "test:1";
    image_.rootfs = rootfs_;
    image_.config.entrypoint = {"/docker-entrypoint.sh"};
    image_.config.cmd = {"nginx", "-g", "daemon off;"};
    image_.config.env = {"PATH=/opt/bin:/usr/bin:/bin", "LANG=C.UTF-8", "SHARED=from-image",
                         "WITH_EQUALS=a=b"};
    image_.config.working_dir = "/srv/www";
  }

  // The startup block as ValidateCreateSandbox normalizes it (written here as REST's JSON).
  static std::optional<StartupConfig> Startup(const json& raw) {
    StartupRequest s;
    if (raw.contains("mode")) s.mode = raw["mode"].get<std::string>();
    for (auto [key, list] :
         {std::pair{"argv", &s.argv}, {"args", &s.args}, {"entrypoint", &s.entrypoint}}) {
      if (!raw.contains(key)) continue;
      list->given = true;
      list->items = raw[key].get<std::vector<std::string>>();
    }
    if (raw.contains("cwd")) s.cwd = raw["cwd"].get<std::string>();
    if (raw.contains("user")) s.user = raw["user"].get<std::string>();
    CreateSandbox create;
    create.startup = s;
    auto r = ValidateCreateSandbox(create, "test:1");
    EXPECT_TRUE(r.ok()) << raw.dump() << ": " << r.status().message();
    return r.ok() ? r->config.startup : std::nullopt;
  }

  runtime::ProcessSpec MustPlan(const std::optional<StartupConfig>& startup,
                                const std::map<std::string, std::string>& env = {}) {
    auto p = PlanStartup(startup, image_, env);
    EXPECT_TRUE(p.ok()) << p.status().message();
    return p.ok() ? *p : runtime::ProcessSpec{};
  }

  static std::string EnvValue(const runtime::ProcessSpec& p, const std::string& name) {
    std::string prefix = name + "=";
    std::string found = "<unset>";
    int count = 0;
    for (const auto& kv : p.env) {
      if (kv.rfind(prefix, 0) == 0) {
        found = kv.substr(prefix.size());
        ++count;
      }
    }
    EXPECT_LE(count, 1) << name << " appears more than once";
    return found;
  }

  os::TempDir tmp_{"startup-plan-test"};
  const std::string rootfs_ = tmp_.path();
  Image image_;
};

using Argv = std::vector<std::string>;

TEST_F(StartupPlanTest, ImageModeRunsEntrypointThenCmd) {
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}})).argv,
            (Argv{"/docker-entrypoint.sh", "nginx", "-g", "daemon off;"}));
}

TEST_F(StartupPlanTest, ImageModeWithOnlyCmd) {
  image_.config.entrypoint.clear();
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}})).argv, (Argv{"nginx", "-g", "daemon off;"}));
}

TEST_F(StartupPlanTest, ArgsReplaceCmd) {
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}, {"args", {"--version"}}})).argv,
            (Argv{"/docker-entrypoint.sh", "--version"}));
}

TEST_F(StartupPlanTest, EntrypointReplacesEntrypointAndClearsCmd) {
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}, {"entrypoint", {"/bin/echo"}}})).argv,
            (Argv{"/bin/echo"}));
  EXPECT_EQ(
      MustPlan(Startup({{"mode", "image"}, {"entrypoint", {"/bin/echo"}}, {"args", {"hi"}}})).argv,
      (Argv{"/bin/echo", "hi"}));
}

TEST_F(StartupPlanTest, EmptyArraysClearValues) {
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}, {"args", json::array()}})).argv,
            (Argv{"/docker-entrypoint.sh"}));
  EXPECT_EQ(
      MustPlan(Startup({{"mode", "image"}, {"entrypoint", json::array()}, {"args", {"ls"}}})).argv,
      (Argv{"ls"}));
}

TEST_F(StartupPlanTest, ClearingEverythingLeavesNothingToRun) {
  auto p = PlanStartup(Startup({{"mode", "image"}, {"entrypoint", json::array()}}), image_, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(p.status().field(), "startup");
  EXPECT_NE(p.status().message().find("nothing to run"), std::string::npos) << p.status().message();

  image_.config.entrypoint.clear();
  p = PlanStartup(Startup({{"mode", "image"}, {"args", json::array()}}), image_, {});
  EXPECT_FALSE(p.ok());

  image_.config.cmd.clear();
  p = PlanStartup(Startup({{"mode", "image"}}), image_, {});
  EXPECT_FALSE(p.ok()) << "an image with neither ENTRYPOINT nor CMD";
}

TEST_F(StartupPlanTest, CommandModeRunsArgvLiterally) {
  Argv argv{"sh", "-c", "echo $HOME *", "\"quoted\""};
  EXPECT_EQ(MustPlan(Startup({{"mode", "command"}, {"argv", argv}})).argv, argv);
}

TEST_F(StartupPlanTest, InteractiveRunsAdaptPause) {
  runtime::ProcessSpec p = MustPlan(std::nullopt);
  EXPECT_EQ(p.argv, Argv{"/.adapt/adapt-pause"});
  EXPECT_EQ(p.argv[0], kPauseBinary);
}

TEST_F(StartupPlanTest, CwdIsInheritedFromTheImageOrOverridden) {
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}})).cwd, "/srv/www");
  EXPECT_EQ(MustPlan(Startup({{"argv", {"ls"}}})).cwd, "/srv/www") << "command mode inherits too";
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}, {"cwd", "/tmp"}})).cwd, "/tmp");
  image_.config.working_dir.clear();
  EXPECT_EQ(MustPlan(Startup({{"mode", "image"}})).cwd, "/");
}

TEST_F(StartupPlanTest, ACwdThatIsAFileInTheImageIsRefusedNamingIt) {
  auto p = PlanStartup(Startup({{"argv", {"ls"}}, {"cwd", "/etc/passwd"}}), image_, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().field(), "startup.cwd");
  EXPECT_EQ(p.status().message(), "startup.cwd '/etc/passwd' is not a directory in the image");
  // A directory the image lacks is made at the start.
  EXPECT_EQ(MustPlan(Startup({{"argv", {"ls"}}, {"cwd", "/srv/new"}})).cwd, "/srv/new");
  EXPECT_EQ(MustPlan(Startup({{"argv", {"ls"}}, {"cwd", "/etc"}})).cwd, "/etc");
}

TEST_F(StartupPlanTest, UserIsInheritedFromTheImage) {
  image_.config.user = "app";
  runtime::ProcessSpec p = MustPlan(Startup({{"mode", "image"}}));
  EXPECT_EQ(p.uid, 1000u);
  EXPECT_EQ(p.gid, 1000u);
  EXPECT_EQ(EnvValue(p, "HOME"), "/home/app");
  // The interactive sandbox runs as the image's user as well.
  EXPECT_EQ(MustPlan(std::nullopt).uid, 1000u);
}

TEST_F(StartupPlanTest, NoUserAnywhereIsRoot) {
  runtime::ProcessSpec p = MustPlan(Startup({{"mode", "image"}}));
  EXPECT_EQ(p.uid, 0u);
  EXPECT_EQ(p.gid, 0u);
  EXPECT_EQ(EnvValue(p, "HOME"), "/root");
}

TEST_F(StartupPlanTest, StartupUserOverridesTheImageUser) {
  image_.config.user = "app";
  runtime::ProcessSpec p = MustPlan(Startup({{"mode", "image"}, {"user", "svc"}}));
  EXPECT_EQ(p.uid, 2000u);
  EXPECT_EQ(p.gid, 3000u);
  EXPECT_EQ(EnvValue(p, "HOME"), "/srv/svc");
}

TEST_F(StartupPlanTest, UserAsUidColonGid) {
  runtime::ProcessSpec p = MustPlan(Startup({{"argv", {"id"}}, {"user", "1234:5678"}}));
  EXPECT_EQ(p.uid, 1234u);
  EXPECT_EQ(p.gid, 5678u);
  EXPECT_EQ(EnvValue(p, "HOME"), "/") << "a uid the image does not know has no home";
}

TEST_F(StartupPlanTest, UserAsNameColonGroup) {
  runtime::ProcessSpec p = MustPlan(Startup({{"argv", {"id"}}, {"user", "app:staff"}}));
  EXPECT_EQ(p.uid, 1000u);
  EXPECT_EQ(p.gid, 50u);
  p = MustPlan(Startup({{"argv", {"id"}}, {"user", "app:42"}}));
  EXPECT_EQ(p.uid, 1000u);
  EXPECT_EQ(p.gid, 42u);
  p = MustPlan(Startup({{"argv", {"id"}}, {"user", "0:staff"}}));
  EXPECT_EQ(p.uid, 0u);
  EXPECT_EQ(p.gid, 50u);
}

TEST_F(StartupPlanTest, AGroupWithoutMembersIsFoundByName) {
  // Most groups end with an empty member list ("app:x:1000:").
  runtime::ProcessSpec p = MustPlan(Startup({{"argv", {"id"}}, {"user", "app:app"}}));
  EXPECT_EQ(p.uid, 1000u);
  EXPECT_EQ(p.gid, 1000u);
  p = MustPlan(Startup({{"argv", {"id"}}, {"user", "root:services"}}));
  EXPECT_EQ(p.uid, 0u);
  EXPECT_EQ(p.gid, 3000u);
  p = MustPlan(Startup({{"argv", {"id"}}, {"user", "1000:root"}}));
  EXPECT_EQ(p.uid, 1000u);
  EXPECT_EQ(p.gid, 0u);
}

TEST_F(StartupPlanTest, UnknownUserOrGroupIsAnErrorOnStartupUser) {
  for (const char* user : {"ghost", "ghost:staff", "app:nogroup", "roo"}) {
    auto p = PlanStartup(Startup({{"argv", {"id"}}, {"user", user}}), image_, {});
    ASSERT_FALSE(p.ok()) << user;
    EXPECT_EQ(p.status().code(), Code::kInvalidArgument) << user;
    EXPECT_EQ(p.status().field(), "startup.user") << user;
    EXPECT_NE(p.status().message().find(user), std::string::npos) << p.status().message();
  }
}

TEST_F(StartupPlanTest, ImageWithoutPasswdRefusesNamesButTakesNumbers) {
  std::filesystem::remove(rootfs_ + "/etc/passwd");
  EXPECT_FALSE(PlanStartup(Startup({{"argv", {"id"}}, {"user", "app"}}), image_, {}).ok());
  runtime::ProcessSpec p = MustPlan(Startup({{"argv", {"id"}}, {"user", "10:20"}}));
  EXPECT_EQ(p.uid, 10u);
  EXPECT_EQ(p.gid, 20u);
}

TEST_F(StartupPlanTest, APasswdLinkingOutOfTheImageReadsNothingOfTheHost) {
  // The host's /etc/shadow has a "root" line whose third and fourth fields are numbers.
  for (const char* target : {"/etc/shadow", "../../../../../../../etc/shadow", "/dev/zero"}) {
    std::filesystem::remove(rootfs_ + "/etc/passwd");
    std::filesystem::create_symlink(target, rootfs_ + "/etc/passwd");
    auto p = PlanStartup(Startup({{"argv", {"id"}}, {"user", "root"}}), image_, {});
    ASSERT_FALSE(p.ok()) << target;
    EXPECT_NE(p.status().message().find("no such user in the image"), std::string::npos)
        << p.status().message();
    runtime::ProcessSpec numeric = MustPlan(Startup({{"argv", {"id"}}, {"user", "0"}}));
    EXPECT_EQ(numeric.gid, 0u) << target;
    EXPECT_EQ(EnvValue(numeric, "HOME"), "/root") << target;
  }
}

TEST_F(StartupPlanTest, AFifoAsPasswdIsRefusedWithoutBlocking) {
  std::filesystem::remove(rootfs_ + "/etc/passwd");
  ASSERT_EQ(::mkfifo((rootfs_ + "/etc/passwd").c_str(), 0644), 0);
  auto p = PlanStartup(Startup({{"argv", {"id"}}, {"user", "app"}}), image_, {});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not a regular file"), std::string::npos)
      << p.status().message();
}

TEST_F(StartupPlanTest, NumericUidTakesItsGroupAndHomeFromTheImage) {
  runtime::ProcessSpec p = MustPlan(Startup({{"argv", {"id"}}, {"user", "2000"}}));
  EXPECT_EQ(p.uid, 2000u);
  EXPECT_EQ(p.gid, 3000u);
  EXPECT_EQ(EnvValue(p, "HOME"), "/srv/svc");
}

TEST_F(StartupPlanTest, SandboxEnvOverridesImageEnv) {
  runtime::ProcessSpec p =
      MustPlan(Startup({{"mode", "image"}}), {{"SHARED", "from-sandbox"}, {"NEW", "1"}});
  EXPECT_EQ(EnvValue(p, "SHARED"), "from-sandbox");
  EXPECT_EQ(EnvValue(p, "NEW"), "1");
  EXPECT_EQ(EnvValue(p, "LANG"), "C.UTF-8");
  EXPECT_EQ(EnvValue(p, "PATH"), "/opt/bin:/usr/bin:/bin");
  EXPECT_EQ(EnvValue(p, "WITH_EQUALS"), "a=b");
  // The same order for every mode: command mode gets the merged environment too.
  runtime::ProcessSpec c = MustPlan(Startup({{"argv", {"env"}}}), {{"SHARED", "from-sandbox"}});
  EXPECT_EQ(EnvValue(c, "SHARED"), "from-sandbox");
  EXPECT_EQ(EnvValue(c, "LANG"), "C.UTF-8");
}

TEST_F(StartupPlanTest, SandboxEnvCanReplacePathAndHome) {
  runtime::ProcessSpec p =
      MustPlan(Startup({{"mode", "image"}}), {{"PATH", "/custom"}, {"HOME", "/elsewhere"}});
  EXPECT_EQ(EnvValue(p, "PATH"), "/custom");
  EXPECT_EQ(EnvValue(p, "HOME"), "/elsewhere");
}

TEST_F(StartupPlanTest, PathAndHomeDefaultWhenNobodySetsThem) {
  image_.config.env.clear();
  runtime::ProcessSpec p = MustPlan(Startup({{"mode", "image"}}));
  EXPECT_EQ(EnvValue(p, "PATH"), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  EXPECT_EQ(EnvValue(p, "HOME"), "/root");
  p = MustPlan(Startup({{"argv", {"id"}}, {"user", "4321"}}));
  EXPECT_EQ(EnvValue(p, "HOME"), "/");
}

TEST_F(StartupPlanTest, MergedEnvironmentMustFitThirtyTwoKiB) {
  // Measure everything but BIG, then fill BIG to exactly the limit, then one byte past it.
  runtime::ProcessSpec base = MustPlan(Startup({{"mode", "image"}}), {{"BIG", ""}});
  size_t used = 0;
  for (const auto& kv : base.env) used += kv.size() + 1;  // "K=V" plus its terminator
  ASSERT_LT(used, 32u * 1024);
  std::string fill(32 * 1024 - used, 'x');
  auto at_limit = PlanStartup(Startup({{"mode", "image"}}), image_, {{"BIG", fill}});
  EXPECT_TRUE(at_limit.ok()) << at_limit.status().message();
  auto over = PlanStartup(Startup({{"mode", "image"}}), image_, {{"BIG", fill + "x"}});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(over.status().field(), "env");
}

}  // namespace
}  // namespace adapt::core
