#include "cli/cli_app.h"

#include <algorithm>
#include <iostream>

#include "cli/automation_commands.h"
#include "cli/commands.h"
#include "cli/output.h"

namespace adapt::cli {
namespace {

// CLI11 treats everything after "--" as positionals, which cannot tell a startup argv from
// a stray word; splitting first keeps `sandbox create -- argv...` explicit.
void SplitTrailingArgs(std::vector<std::string>& args, Invocation& invocation) {
  auto separator = std::find(args.begin(), args.end(), "--");
  if (separator == args.end()) return;
  invocation.has_trailing_args = true;
  invocation.trailing_args.assign(separator + 1, args.end());
  args.erase(separator, args.end());
}

int Fail(std::ostream& err, const Status& status, int exit_code) {
  err << FormatErrorLine(status) << std::endl;
  return exit_code;
}

}  // namespace

int RunAdapt(std::vector<std::string> args, std::istream& in, std::ostream& out,
             std::ostream& err) {
  constexpr int kFailed = 1;
  constexpr int kUsage = 2;
  Invocation invocation;
  SplitTrailingArgs(args, invocation);

  CLI::App app("Command-line client for adaptd, the adapt sandbox server", "adapt");
  // Fallthrough lets the global flags also follow a subcommand: `adapt sandbox list --json`.
  app.fallthrough();
  app.require_subcommand(1);
  app.add_option("--url", invocation.config.url, "adaptd URL (env ADAPT_URL)");
  app.add_option("--api-key", invocation.config.api_key, "API key (env ADAPT_API_KEY)");
  app.add_flag("--json", invocation.json, "print adaptd's JSON answer");
  AddSandboxCommands(app, invocation);
  AddOrgCommands(app, invocation);
  AddKeyCommands(app, invocation);
  AddUserCommands(app, invocation);
  AddCommandCommands(app, invocation);
  AddEndpointCommands(app, invocation);
  AddStorageCommands(app, invocation);
  AddObjectCommands(app, invocation);
  AddSiteCommands(app, invocation);
  AddImageCommands(app, invocation);
  AddOperationCommands(app, invocation);
  AddEnvCommands(app, invocation);
  AddGpuCommands(app, invocation);
  AddSecretCommands(app, invocation);
  AddDatabaseCommands(app, invocation);
  AddAccountCommands(app, invocation);
  AddJobCommands(app, invocation);
  AddAppCommands(app, invocation);
  AddAutomationCommands(app, invocation);
  AddMcpCommand(app, invocation);

  std::reverse(args.begin(), args.end());  // CLI11's vector overload wants them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help
    return Fail(err, Status(Code::kInvalidArgument, e.what()), kUsage);
  }
  if (!invocation.run) return Fail(err, Internal("no command chosen"), kUsage);
  if (invocation.has_trailing_args && !invocation.accepts_trailing_args) {
    return Fail(err, Status(Code::kInvalidArgument, "unexpected arguments after --"), kUsage);
  }

  Console console{in, out};
  if (invocation.prepare) {
    Status status = invocation.prepare(console);
    if (!status.ok()) return Fail(err, status, kUsage);
  }
  Result<ClientConfig> config = ResolveClientConfig(invocation.config);
  if (!config.ok()) return Fail(err, config.status(), kFailed);
  ApiClient client(config->url, config->api_key);
  Status status = invocation.run(client, console);
  out.flush();
  if (!status.ok()) return Fail(err, status, kFailed);
  return invocation.exit_code;
}

}  // namespace adapt::cli
