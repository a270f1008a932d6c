// The README and docs/ against the binary: every flag the docs give a command exists in that
// command's --help, and every flag a command's --help lists is documented for it. The commands
// are the ones `kagent --help` lists, so a new command is held to its docs the day it is added.
//
// Which command a flag in the docs belongs to: the nearest `kagent <command>` before it on its
// line (a wrapped synopsis line in a code block continues the line above); else the section
// (a heading naming `kagent <command>`) or the file (docs/<command>.md). Another program
// named on the line (ctest, cmake, kagent-worker, ...) owns the flags after it. Flags in a
// command's --help group "LLM" are documented once, for `kagent llm` (docs/llm.md); another
// command documents them by saying it takes "LLM flags".
//
// The synopses of the commands an RL user runs (serve, curate, rollout: a code-block line or a
// heading that starts with `kagent <command>`) also say which flags are required as --help does:
// a flag outside [...] is REQUIRED there, and every REQUIRED flag stands outside [...].
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "help_text.h"

using namespace kagent::testing;
namespace fs = std::filesystem;

namespace {

struct DocFlags {
  std::map<std::string, std::set<std::string>> flags;       // command -> flags the docs give it
  std::map<std::string, std::string> where;                  // "command flag" -> file:line
  std::set<std::string> takes_llm_flags;                     // commands documented with "LLM flags"
};

std::vector<fs::path> doc_files() {
  const fs::path root = KAGENT_SOURCE_DIR;
  std::vector<fs::path> files = {root / "README.md"};
  for (const auto& e : fs::directory_iterator(root / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  return files;
}

DocFlags read_docs(const std::vector<std::string>& commands) {
  const std::set<std::string> known(commands.begin(), commands.end());
  // A command, another program, or a flag (at a word's start).
  const std::regex token(R"(kagent ([a-z]+)|\b(ctest|cmake|pytest|python3?|nvcc|ncu|git|pip|bash|kagent-worker|sbatch|cuobjdump|OpenRLHF)\b|(^|[\s\[|(`/,])(--?[A-Za-z][\w-]*))");
  DocFlags docs;
  for (const auto& file : doc_files()) {
    const std::string stem = file.stem().string();
    const std::string file_command = known.count(stem) ? stem : "";
    std::string section = file_command, carried;
    bool code = false;
    std::ifstream in(file);
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line.rfind("```", 0) == 0) {
        code = !code;
        carried.clear();
        continue;
      }
      std::smatch m;
      if (!code && line.rfind('#', 0) == 0) {
        const size_t level = line.find_first_not_of('#');
        if (std::regex_search(line, m, std::regex(R"(kagent ([a-z]+))")) && known.count(m[1])) section = m[1];
        else if (level <= 2) section = file_command;
        continue;
      }
      std::string context = code && !line.empty() && line[0] == ' ' && !carried.empty() ? carried : section;
      for (auto it = std::sregex_iterator(line.begin(), line.end(), token); it != std::sregex_iterator(); ++it) {
        const std::smatch& t = *it;
        if (t[1].matched) {
          if (known.count(t[1])) context = t[1];
        } else if (t[2].matched) {
          context.clear();
        } else if (!context.empty()) {
          docs.flags[context].insert(t[4]);
          docs.where.emplace(context + " " + t[4].str(), file.filename().string() + ":" + std::to_string(n));
        }
      }
      if (!context.empty() && line.find("LLM flags") != std::string::npos) docs.takes_llm_flags.insert(context);
      if (code) carried = context;
    }
  }
  return docs;
}

}  // namespace

TEST_CASE("every flag the docs give a command exists, and every flag of a command is documented") {
  const auto commands = kagent_commands();
  REQUIRE(commands.size() >= 4);
  const DocFlags docs = read_docs(commands);
  for (const auto& command : commands) {
    CAPTURE(command);
    const CommandHelp help = command_help(command);
    std::set<std::string> names = {"-h", "--help"};
    for (const auto& opt : help.options) names.insert(opt.names.begin(), opt.names.end());

    const auto documented = docs.flags.find(command);
    if (documented != docs.flags.end())
      for (const auto& flag : documented->second)
        CHECK_MESSAGE(names.count(flag), docs.where.at(command + " " + flag) << ": `kagent " << command << " " << flag
                                                                            << "` is documented but kagent has no such flag");

    for (const auto& opt : help.options) {
      const auto in = [&](const std::string& c) {
        const auto f = docs.flags.find(c);
        if (f == docs.flags.end()) return false;
        for (const auto& name : opt.names)
          if (f->second.count(name)) return true;
        return false;
      };
      const bool ok = in(command) || (opt.group == "LLM" && docs.takes_llm_flags.count(command) && in("llm"));
      CHECK_MESSAGE(ok, "kagent " << command << " " << opt.names.back()
                                  << " is in --help but not documented for it (README.md or docs/" << command << ".md)");
    }
  }
}

namespace {

struct Synopsis {
  std::string where;                 // file:line
  std::set<std::string> required;    // flags outside [...]
  std::set<std::string> optional;    // flags inside [...]
  bool code = false;                 // a code-block line (a full synopsis), not a heading
};


// Every synopsis of `command`: a code-block line starting with "kagent <command>" (with the
// indented lines that continue it) or a heading whose code starts so.
std::vector<Synopsis> synopses(const std::string& command) {
  std::vector<Synopsis> out;
  const std::string head = "kagent " + command;
  const std::regex flag(R"((^|[\s\[|(])(--?[A-Za-z][\w-]*))");
  for (const auto& file : doc_files()) {
    std::ifstream in(file);
    bool code = false, continuing = false;
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line.rfind("```", 0) == 0) {
        code = !code;
        continuing = false;
        continue;
      }
      std::string text;
      if (code && line.rfind(head + " ", 0) == 0) {
        text = line;
        out.push_back({file.filename().string() + ":" + std::to_string(n), {}, {}, true});
        continuing = true;
      } else if (code && continuing && !line.empty() && line[0] == ' ') {
        text = line;
      } else {
        continuing = false;
        const auto tick = line.find("`" + head + " ");
        if (code || line.rfind('#', 0) != 0 || tick == std::string::npos) continue;
        text = line.substr(tick + 1, line.find('`', tick + 1) - tick - 1);
        out.push_back({file.filename().string() + ":" + std::to_string(n), {}, {}});
      }
      int depth = 0;
      size_t pos = 0;
      for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it) {
        const size_t at = static_cast<size_t>(it->position(2));
        for (; pos < at; ++pos) depth += text[pos] == '[' ? 1 : text[pos] == ']' ? -1 : 0;
        (depth > 0 ? out.back().optional : out.back().required).insert((*it)[2]);
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the synopses of serve, curate and rollout mark the flags --help requires, and only those") {
  for (const std::string command : {"serve", "curate", "rollout"}) {
    CAPTURE(command);
    const CommandHelp help = command_help(command);
    const auto found = synopses(command);
    REQUIRE_MESSAGE(!found.empty(), "no synopsis of kagent " << command << " in README.md or docs/");
    for (const auto& s : found) {
      CAPTURE(s.where);
      for (const auto& opt : help.options) {
        bool outside = false;
        for (const auto& name : opt.names) outside |= s.required.count(name) > 0;
        if (opt.required)
          CHECK_MESSAGE(outside, s.where << ": " << opt.names.back() << " is REQUIRED in --help: write it outside [...]");
        else
          CHECK_MESSAGE(!outside, s.where << ": " << opt.names.back() << " is optional in --help: write it as [" << opt.names.back()
                                          << " ...]");
      }
    }
  }
}

// A code-block synopsis of curate or rollout is the whole command: it names every flag --help
// lists (the README's curate synopsis once lacked --keep-duplicates and --allow-empty).
TEST_CASE("the code-block synopses of curate and rollout name every flag --help lists") {
  for (const std::string command : {"curate", "rollout"}) {
    CAPTURE(command);
    const CommandHelp help = command_help(command);
    int checked = 0;
    for (const auto& s : synopses(command)) {
      if (!s.code) continue;
      CAPTURE(s.where);
      ++checked;
      for (const auto& opt : help.options) {
        bool named = false;
        for (const auto& n : opt.names) named |= s.required.count(n) > 0 || s.optional.count(n) > 0;
        CHECK_MESSAGE(named, s.where << ": the synopsis of kagent " << command << " lacks " << opt.names.back());
      }
    }
    CHECK_MESSAGE(checked > 0, "no code-block synopsis of kagent " << command);
  }
}
