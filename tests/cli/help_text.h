// What the kagent binary says about itself: the commands `kagent --help` lists and the options
// each `kagent <command> --help` lists, for the tests that hold the CLI and the docs to them.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "kagent_process.h"
#include "temp_dir.h"

namespace kagent::testing {

struct HelpOption {
  std::vector<std::string> names;  // "-n", "--samples"
  std::string type;                // "INT", "FLOAT", "TEXT"; empty for a flag without a value
  std::string group;               // "Options", "LLM", ...
  bool required = false;           // --help says REQUIRED
  bool numeric() const { return type.rfind("INT", 0) == 0 || type.rfind("FLOAT", 0) == 0 || type.rfind("UINT", 0) == 0; }
};

struct CommandHelp {
  std::vector<HelpOption> options;  // without -h,--help
  bool required_positional = false;
};

inline std::string kagent_help(const std::vector<std::string>& args) {
  const TempDir dir("kagent-help");
  return run_kagent(args, {}, dir.str()).out;
}

// The commands `kagent --help` lists under "Subcommands:".
inline std::vector<std::string> kagent_commands() {
  std::istringstream in(kagent_help({"--help"}));
  std::vector<std::string> commands;
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      listing = line == "Subcommands:";
      continue;
    }
    if (listing) commands.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return commands;
}

inline CommandHelp command_help(const std::string& command) {
  std::istringstream in(kagent_help({command, "--help"}));
  CommandHelp help;
  std::string group;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      if (line.back() == ':') group = line.substr(0, line.size() - 1);
      continue;
    }
    if (group == "Positionals") {
      if (line.find("REQUIRED") != std::string::npos) help.required_positional = true;
      continue;
    }
    if (line.rfind("  -", 0) != 0) continue;  // a description's continuation
    std::istringstream words(line);
    std::string names, type;
    words >> names >> type;
    HelpOption opt;
    opt.group = group;
    opt.required = line.find(" REQUIRED") != std::string::npos;
    if (!type.empty() && std::isupper(static_cast<unsigned char>(type[0]))) opt.type = type;
    for (size_t start = 0; start <= names.size();) {
      size_t comma = names.find(',', start);
      if (comma == std::string::npos) comma = names.size();
      opt.names.push_back(names.substr(start, comma - start));
      start = comma + 1;
    }
    if (opt.names.front() != "-h") help.options.push_back(opt);
  }
  return help;
}

}  // namespace kagent::testing
