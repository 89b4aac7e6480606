// `stowage`: the command-line front door. Dispatches to the subcommands in this folder.
#include <cstdio>
#include <utility>
#include <vector>

#include "Commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "stowage: ahead-of-time compiler from ONNX models to standalone C99 with every tensor statically placed "
      "(no malloc).\nTypical use:\n  stowage info model.onnx\n  stowage compile model.onnx -o out/ --name net\n"
      "  stowage run model.onnx --input input_0.pb --output-dir results/"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "stowage " STOWAGE_CLI_VERSION);

  std::vector<std::pair<CLI::App*, stowage::cli::CommandRunner>> commands;
  auto add = [&](stowage::cli::CommandRunner (*reg)(CLI::App&)) {
    size_t before = app.get_subcommands({}).size();
    auto runner = reg(app);
    commands.emplace_back(app.get_subcommands({}).at(before), std::move(runner));
  };
  add(&stowage::cli::registerInfoCommand);
  add(&stowage::cli::registerCompileCommand);
  add(&stowage::cli::registerRunCommand);
  add(&stowage::cli::registerPlanCommand);
  add(&stowage::cli::registerCheckKernelsCommand);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : stowage::cli::kExitUserError;
  }
  for (auto& [sub, run] : commands)
    if (sub->parsed()) return run();
  return stowage::cli::kExitUserError;
}
