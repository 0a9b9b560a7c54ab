// adapt sandbox python: runs a Python program in a running sandbox through
// POST /v1/sandboxes/{id}/python, printing its output as it comes and exiting with its code.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/command_output.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/sandbox_wait.h"
#include "cli/text_input.h"

namespace adapt::cli {
namespace {

struct PythonOptions {
  std::string sandbox_id;
  std::string code;
  std::string file;
  int timeout = 0;
  nlohmann::json body;
};

// The program: --code, else --file, else standard input ("-" as the file too), read up to the
// API's 8 MiB.
Result<std::string> ProgramText(const PythonOptions& options, const Console& console) {
  std::optional<std::string> code = options.code;
  if (options.code.empty()) {
    if (options.file.empty() || options.file == "-") {
      code = ReadAtMost(console.in);
    } else {
      std::ifstream in(options.file, std::ios::binary);
      if (!in) return Status(Code::kInvalidArgument, "cannot read " + options.file);
      code = ReadAtMost(in);
    }
  }
  if (!code || code->size() > kMaxTextInputBytes)
    return Status(Code::kInvalidArgument, "the Python program is larger than 8 MiB");
  if (code->empty()) return Status(Code::kInvalidArgument, "the Python program is empty");
  // The API's `code` is a JSON string: a stray byte would reach python3 as U+FFFD.
  if (!IsPlainText(*code))
    return Status(Code::kInvalidArgument, "the Python program is not UTF-8 text without NUL bytes");
  return std::move(*code);
}

}  // namespace

void AddSandboxPython(CLI::App& group, Invocation& invocation) {
  auto options = std::make_shared<PythonOptions>();
  CLI::App* python = group.add_subcommand(
      "python",
      "Run Python code in a running sandbox: adapt sandbox python ID [--code CODE | --file "
      "PATH] (else the program is read from standard input)");
  python->add_option("id", options->sandbox_id, "sandbox id")->required();
  auto* code = python->add_option("--code", options->code, "the program")->type_name("CODE");
  python->add_option("--file", options->file, "read the program from PATH ('-': standard input)")
      ->type_name("PATH")
      ->excludes(code);
  python->add_option("--timeout", options->timeout, "seconds before the program is killed")
      ->type_name("SECONDS");
  python->callback([options, &invocation] {
    invocation.prepare = [options](const Console& console) -> Status {
      ASSIGN_OR_RETURN(std::string program, ProgramText(*options, console));
      options->body = {{"code", program}, {"waitSeconds", 0}};
      if (options->timeout > 0) options->body["timeoutSeconds"] = options->timeout;
      return Status::Ok();
    };
    invocation.run = [options, &invocation](const ApiClient& client, const Console& console) {
      RETURN_IF_ERROR(AwaitProvisioned(client, options->sandbox_id));
      ASSIGN_OR_RETURN(
          nlohmann::json command,
          JsonOrError(client.Post(SandboxPath(options->sandbox_id) + "/python", options->body)));
      return FinishCommand(client, console, invocation, options->sandbox_id, command, "python");
    };
  });
}

}  // namespace adapt::cli
