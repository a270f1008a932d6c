// A kagent subcommand: it registers its flags on the CLI11 app and returns how to run it.
// Each command lives in its own file (eval_command.cpp, llm_command.cpp, ...); main.cpp
// only wires them together.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace kagent::cli {

struct Command {
  CLI::App* app = nullptr;    // the subcommand, to ask whether it was given
  std::function<int()> run;   // returns the process exit status
};

}  // namespace kagent::cli
