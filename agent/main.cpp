// kagent: the command line. Each subcommand lives in cli/<name>_command.cpp; cli/errors.cpp
// is the one place command-line errors are reported.
#include <CLI/CLI.hpp>

#include "build_info.h"
#include "cli/baselines_command.h"
#include "cli/collect_command.h"
#include "cli/curate_command.h"
#include "cli/errors.h"
#include "cli/eval_command.h"
#include "cli/llm_command.h"
#include "cli/report_command.h"
#include "cli/rollout_command.h"
#include "cli/serve_command.h"
#include "cli/solve_command.h"

int main(int argc, char** argv) {
  CLI::App app{"kagent: an LLM writes CUDA kernels for PyTorch problems; kagent compiles, verifies, times and "
               "profiles them"};
  app.set_version_flag("--version", std::string("kagent ") + kagent::build::kVersion);
  app.require_subcommand(1);
  std::vector<kagent::cli::Command> commands = {
      kagent::cli::add_eval_command(app),
      kagent::cli::add_llm_command(app),
      kagent::cli::add_solve_command(app),
      kagent::cli::add_report_command(app),
      kagent::cli::add_collect_command(app),
      kagent::cli::add_baselines_command(app),
      kagent::cli::add_curate_command(app),
      kagent::cli::add_rollout_command(app),
      kagent::cli::add_serve_command(app),
  };
  if (auto status = kagent::cli::parse_command_line(app, argc, argv)) return *status;
  for (auto& c : commands)
    if (c.app->parsed()) return c.run();
  return kagent::cli::kUsageError;
}
