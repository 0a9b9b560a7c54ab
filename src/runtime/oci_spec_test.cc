#include "runtime/oci_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace adapt::runtime {
namespace {

using nlohmann::json;

SandboxSpec ExampleSpec() {
  SandboxSpec s;
  s.id = "sbx_abc123";
  s.rootfs = "/var/lib/adapt/sandboxes/sbx_abc123/rootfs";
  s.helpers_dir = "/var/lib/adapt/helpers";
  s.process.argv = {"python", "-c", "print('hi')"};
  s.process.env = {"PATH=/usr/bin:/bin", "HOME=/home/app", "EMPTY="};
  s.process.cwd = "/work";
  s.process.uid = 1000;
  s.process.gid = 1001;
  s.cpu = 4;
  s.memory_mib = 4096;
  s.pids_limit = 512;
  s.hostname = "sbx_abc123";
  return s;
}

json Render(const SandboxSpec& s) {
  json j = json::parse(RenderOciSpec(s), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "RenderOciSpec did not produce JSON";
  return j;
}

TEST(RenderOciSpec, ProcessHasArgsEnvCwdAndUser) {
  json j = Render(ExampleSpec());
  const json& p = j["process"];
  EXPECT_EQ(p["args"], json({"python", "-c", "print('hi')"}));
  EXPECT_EQ(p["env"], json({"PATH=/usr/bin:/bin", "HOME=/home/app", "EMPTY="}));
  EXPECT_EQ(p["cwd"], "/work");
  EXPECT_EQ(p["user"]["uid"], 1000);
  EXPECT_EQ(p["user"]["gid"], 1001);
  EXPECT_EQ(p["terminal"], false);
}

TEST(RenderOciSpec, EmptyCwdBecomesRoot) {
  SandboxSpec s = ExampleSpec();
  s.process.cwd = "";
  EXPECT_EQ(Render(s)["process"]["cwd"], "/");
}

TEST(RenderOciSpec, NoNewPrivilegesAndASmallCapabilitySet) {
  json p = Render(ExampleSpec())["process"];
  EXPECT_EQ(p["noNewPrivileges"], true);
  for (const char* set : {"bounding", "effective", "inheritable", "permitted"}) {
    const json& caps = p["capabilities"][set];
    ASSERT_TRUE(caps.is_array()) << set;
    for (const auto& c : caps) {
      EXPECT_NE(c, "CAP_SYS_ADMIN") << set;
      EXPECT_NE(c, "CAP_NET_ADMIN") << set;
      EXPECT_NE(c, "CAP_SYS_PTRACE") << set;
    }
  }
}

std::set<std::string> Caps(const SandboxSpec& s, const char* set) {
  std::set<std::string> out;
  json spec = Render(s);
  for (const auto& c : spec["process"]["capabilities"][set]) out.insert(c.get<std::string>());
  return out;
}

TEST(RenderOciSpec, RestrictedRunsARootMasterThatDropsToItsWorkerButNoPackageManager) {
  std::set<std::string> want = {"CAP_AUDIT_WRITE", "CAP_KILL",   "CAP_NET_BIND_SERVICE",
                                "CAP_CHOWN",       "CAP_SETUID", "CAP_SETGID"};
  for (const char* set : {"bounding", "effective", "inheritable", "permitted"})
    EXPECT_EQ(Caps(ExampleSpec(), set), want) << set;
}

TEST(RenderOciSpec, DeveloperAddsExactlyThePackageManagerSet) {
  SandboxSpec s = ExampleSpec();
  s.security_profile = "developer";
  std::set<std::string> want = {
      "CAP_AUDIT_WRITE", "CAP_KILL",         "CAP_NET_BIND_SERVICE", "CAP_CHOWN",  "CAP_SETUID",
      "CAP_SETGID",      "CAP_DAC_OVERRIDE", "CAP_FOWNER",           "CAP_FSETID", "CAP_SETFCAP"};
  for (const char* set : {"bounding", "effective", "inheritable", "permitted"}) {
    std::set<std::string> caps = Caps(s, set);
    EXPECT_EQ(caps, want) << set;
    for (const char* never : {"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_SYS_ADMIN", "CAP_SYS_PTRACE"})
      EXPECT_EQ(caps.count(never), 0u) << never;
  }
}

TEST(RenderOciSpec, ReadOnlyDirsAreBoundOverThemselvesFromTheRootfs) {
  SandboxSpec s = ExampleSpec();
  s.read_only_dirs = {"/var/lib/dpkg"};
  const json* found = nullptr;
  json mounts = Render(s)["mounts"];
  for (const auto& m : mounts)
    if (m["destination"] == "/var/lib/dpkg") found = &m;
  ASSERT_NE(found, nullptr);
  EXPECT_EQ((*found)["source"], s.rootfs + "/var/lib/dpkg");
  EXPECT_EQ((*found)["type"], "bind");
  EXPECT_NE(std::find((*found)["options"].begin(), (*found)["options"].end(), "ro"),
            (*found)["options"].end());
}

TEST(RenderOciSpec, CgroupsPathIsBelowAdapt) {
  EXPECT_EQ(Render(ExampleSpec())["linux"]["cgroupsPath"], "/adapt/sbx_abc123");
}

TEST(RenderOciSpec, ResourcesCarryMemoryCpuAndPidsLimits) {
  json r = Render(ExampleSpec())["linux"]["resources"];
  EXPECT_EQ(r["memory"]["limit"].get<int64_t>(), int64_t{4096} * 1024 * 1024);
  EXPECT_EQ(r["cpu"]["period"], 100000);
  EXPECT_EQ(r["cpu"]["quota"], 400000);
  EXPECT_EQ(r["pids"]["limit"], 512);
}

TEST(RenderOciSpec, ACpuLimitLeftToTheShimIsNotInTheSpec) {
  SandboxSpec s = ExampleSpec();
  s.cpu_limit_by_shim = true;
  json r = Render(s)["linux"]["resources"];
  EXPECT_FALSE(r.contains("cpu")) << r.dump();
  // The other limits stay runsc's to set, before anything runs.
  EXPECT_EQ(r["memory"]["limit"].get<int64_t>(), int64_t{4096} * 1024 * 1024);
  EXPECT_EQ(r["pids"]["limit"], 512);
  EXPECT_EQ(CpuQuotaUs(s.cpu), 400000);
}

TEST(RenderOciSpec, LargestLimitsDoNotOverflow) {
  SandboxSpec s = ExampleSpec();
  s.cpu = 32;
  s.memory_mib = 65536;
  json r = Render(s)["linux"]["resources"];
  EXPECT_EQ(r["memory"]["limit"].get<int64_t>(), int64_t{65536} * 1024 * 1024);
  EXPECT_EQ(r["cpu"]["quota"].get<int64_t>(), int64_t{32} * 100000);
}

TEST(RenderOciSpec, HelpersAreBindMountedReadOnlyAtDotAdapt) {
  json mounts = Render(ExampleSpec())["mounts"];
  ASSERT_TRUE(mounts.is_array());
  const json* adapt = nullptr;
  for (const auto& m : mounts) {
    if (m["destination"] == "/.adapt") adapt = &m;
  }
  ASSERT_NE(adapt, nullptr) << mounts.dump();
  EXPECT_EQ((*adapt)["type"], "bind");
  EXPECT_EQ((*adapt)["source"], "/var/lib/adapt/helpers");
  const json& opts = (*adapt)["options"];
  EXPECT_NE(std::find(opts.begin(), opts.end(), "ro"), opts.end()) << opts.dump();
  EXPECT_NE(std::find(opts.begin(), opts.end(), "rbind"), opts.end()) << opts.dump();
  EXPECT_EQ(std::find(opts.begin(), opts.end(), "rw"), opts.end()) << opts.dump();
}

TEST(RenderOciSpec, RootHostnameAndNamespaces) {
  json j = Render(ExampleSpec());
  EXPECT_EQ(j["root"]["path"], "/var/lib/adapt/sandboxes/sbx_abc123/rootfs");
  EXPECT_EQ(j["hostname"], "sbx_abc123");
  EXPECT_TRUE(j.contains("ociVersion"));
  std::vector<std::string> types;
  for (const auto& ns : j["linux"]["namespaces"]) types.push_back(ns["type"]);
  for (const char* want : {"pid", "network", "ipc", "uts", "mount"})
    EXPECT_NE(std::find(types.begin(), types.end(), want), types.end()) << want;
}

TEST(RenderOciSpec, NetworkNamespacePathAndResolvConfWhenGiven) {
  json plain = Render(ExampleSpec());
  for (const auto& ns : plain["linux"]["namespaces"]) EXPECT_FALSE(ns.contains("path"));
  for (const auto& m : plain["mounts"]) EXPECT_NE(m["destination"], "/etc/resolv.conf");

  SandboxSpec s = ExampleSpec();
  s.netns_path = "/run/netns/adapt-sbx_abc123";
  s.resolv_conf = "/var/lib/adapt/net/sbx_abc123/resolv.conf";
  json j = Render(s);
  int paths = 0;
  for (const auto& ns : j["linux"]["namespaces"]) {
    if (ns["type"] == "network") {
      EXPECT_EQ(ns["path"], "/run/netns/adapt-sbx_abc123");
      ++paths;
    }
  }
  EXPECT_EQ(paths, 1);
  bool resolv = false;
  for (const auto& m : j["mounts"]) {
    if (m["destination"] != "/etc/resolv.conf") continue;
    resolv = true;
    EXPECT_EQ(m["source"], "/var/lib/adapt/net/sbx_abc123/resolv.conf");
    EXPECT_NE(std::find(m["options"].begin(), m["options"].end(), "ro"), m["options"].end());
  }
  EXPECT_TRUE(resolv);
}

TEST(RenderOciSpec, LdSoPreloadIsBoundReadOnlyOnlyWhenGiven) {
  json plain = Render(ExampleSpec());
  for (const auto& m : plain["mounts"]) EXPECT_NE(m["destination"], "/etc/ld.so.preload");
  SandboxSpec s = ExampleSpec();
  s.ld_so_preload = "/var/lib/adapt/sandboxes/sbx_abc123/ld.so.preload";
  json j = Render(s);
  int found = 0;
  for (const auto& m : j["mounts"]) {
    if (m["destination"] != "/etc/ld.so.preload") continue;
    ++found;
    EXPECT_EQ(m["type"], "bind");
    EXPECT_EQ(m["source"], "/var/lib/adapt/sandboxes/sbx_abc123/ld.so.preload");
    EXPECT_NE(std::find(m["options"].begin(), m["options"].end(), "ro"), m["options"].end());
  }
  EXPECT_EQ(found, 1);
}

TEST(RenderOciSpec, StorageIsBoundReadWriteAtWorkspaceWhenGiven) {
  json plain = Render(ExampleSpec());
  for (const auto& m : plain["mounts"]) EXPECT_NE(m["destination"], "/workspace");
  SandboxSpec s = ExampleSpec();
  s.workspace_dir = "/var/lib/adapt/storage/volumes/vol_abc/workspace";
  json j = Render(s);
  int found = 0;
  for (const auto& m : j["mounts"]) {
    if (m["destination"] != "/workspace") continue;
    ++found;
    EXPECT_EQ(m["type"], "bind");
    EXPECT_EQ(m["source"], "/var/lib/adapt/storage/volumes/vol_abc/workspace");
    EXPECT_NE(std::find(m["options"].begin(), m["options"].end(), "rw"), m["options"].end());
  }
  EXPECT_EQ(found, 1);
}

TEST(RenderOciSpec, StringsWithQuotesAndNewlinesStayIntact) {
  SandboxSpec s = ExampleSpec();
  s.process.argv = {"sh", "-c", "echo \"a\"\n\\b"};
  EXPECT_EQ(Render(s)["process"]["args"][2], "echo \"a\"\n\\b");
}

}  // namespace
}  // namespace adapt::runtime
