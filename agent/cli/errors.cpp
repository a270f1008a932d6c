#include "cli/errors.h"

#include <cctype>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/environment_settings.h"
#include "cli/eval_flags.h"
#include "common/utf8.h"

namespace kagent::cli {

namespace {

void print_line(std::string_view command, std::string_view kind, std::string_view message) {
  std::cerr << "kagent" << (command.empty() ? "" : " ") << command << ": " << kind << ": " << plain_message(message)
            << "\n";
}

// What nlohmann's exception says after its "[json.exception.<kind>.<id>] ", in plain words.
std::string plain_json_error(const std::string& kind, const std::string& full) {
  // What is said comes first; what follows ("last read: '...'") may be a whole token of the
  // bad file, megabytes: only the head is searched.
  const std::string text = full.substr(0, 400);
  std::smatch m;
  if (kind.rfind("parse_error", 0) == 0) {
    std::string where;
    if (std::regex_search(text, m, std::regex(R"(at line (\d+), column (\d+))")))
      where = " (line " + m[1].str() + ", column " + m[2].str() + ")";
    if (text.find("empty input") != std::string::npos) return "empty: no JSON in it";
    if (text.find("unexpected end of input") != std::string::npos) return "cut short: the JSON ends early" + where;
    if (text.find("UTF-8") != std::string::npos || text.find("utf-8") != std::string::npos)
      return "not UTF-8 text" + where;
    return "not valid JSON" + where;
  }
  if (std::regex_search(text, m, std::regex(R"(type must be (\w+), but is (\w+))")))
    return "a value is " + m[2].str() + " where " + (m[1] == "array" || m[1] == "object" ? "an " : "a ") + m[1].str() +
           " is expected";
  if (std::regex_search(text, m, std::regex(R"(key '([^']*)' not found)"))) return "the key \"" + m[1].str() + "\" is missing";
  if (text.find("invalid UTF-8 byte") != std::string::npos) return "text that is not UTF-8";
  return full;
}

}  // namespace

std::string plain_message(std::string_view message) {
  // A message quoting a whole bad file (a library's "last read", a line of a list) is cut: an
  // error line is read, not scrolled.
  constexpr size_t kMaxBytes = 64 << 10;
  std::string s = valid_utf8(message.substr(0, kMaxBytes));
  if (message.size() > kMaxBytes) s += fmt::format(" ... ({} more bytes)", message.size() - kMaxBytes);
  // Control bytes (a NUL of a binary file's "name", an escape sequence) are no text either.
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') c = '?';
  std::smatch m;
  // nlohmann: "[json.exception.parse_error.101] parse error at line 1, column 1: ...; last read: '...'".
  // (Searched for first: std::regex over a long compiler message is slow.)
  if (s.find("[json.exception.") != std::string::npos &&
      std::regex_search(s, m, std::regex(R"(\[json\.exception\.(\w+)\.\d+\] ?)")))
    s = m.prefix().str() + plain_json_error(m[1], m.suffix().str());
  // libstdc++: "filesystem error: cannot create directories: Permission denied [/a/b]".
  if (s.find("filesystem error: ") != std::string::npos &&
      std::regex_search(s, m, std::regex(R"(filesystem error: ([^:]*): ([^\[]*?) \[([^\]]*)\](?: \[([^\]]*)\])?)")))
    s = m.prefix().str() + m[1].str() + " " + m[3].str() + (m[4].matched ? " and " + m[4].str() : "") + ": " + m[2].str() +
        m.suffix().str();
  return s;
}

void print_error(std::string_view command, std::string_view message) { print_line(command, "error", message); }
void print_warning(std::string_view command, std::string_view message) { print_line(command, "warning", message); }

namespace {

std::string command_names(CLI::App& app) {
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (!names.empty()) names += ", ";
    names += sub->get_name();
  }
  return names;
}

bool is_number(const std::string& s) {
  char* end = nullptr;
  (void)std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// "unknown flag --x" or "unexpected argument 'x'".
std::string unexpected(const std::string& arg) {
  if (arg.size() > 1 && arg[0] == '-' && !is_number(arg)) return "unknown flag " + arg.substr(0, arg.find('='));
  return "unexpected argument '" + arg + "'";
}

// The name the user typed for the option CLI11 calls `name` (-n rather than --samples).
std::string typed_name(const CLI::App* sub, const std::string& name, const std::vector<std::string>& args) {
  const CLI::Option* opt = sub ? sub->get_option_no_throw(name) : nullptr;
  if (!opt) return name;
  for (const auto& a : args) {
    const std::string flag = a.substr(0, a.find('='));
    if (flag.size() > 1 && flag[0] == '-' && opt->check_name(flag)) return flag;
  }
  return name;
}

bool numeric_option(const CLI::App* sub, const std::string& name) {
  const CLI::Option* opt = sub ? sub->get_option_no_throw(name) : nullptr;
  if (!opt) return false;
  const std::string type = opt->get_type_name();
  for (const char* t : {"INT", "UINT", "FLOAT", "NUMBER"})
    if (type.find(t) != std::string::npos) return true;
  return false;
}

// CLI11's message for `e`, in plain words and naming the flag as typed.
std::string plain_words(const CLI::ParseError& e, const CLI::App* sub, const std::vector<std::string>& args) {
  const std::string what = e.what();
  std::smatch m;
  if (dynamic_cast<const CLI::RequiredError*>(&e) && std::regex_match(what, m, std::regex(R"((\S+) is required)"))) {
    const std::string name = m[1];
    const CLI::Option* opt = sub ? sub->get_option_no_throw(name) : nullptr;
    if (!opt || !opt->get_positional()) return name + " is required";
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return "missing " + upper + (opt->get_description().empty() ? "" : ": " + opt->get_description());
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) &&
      std::regex_match(what, m, std::regex(R"((\S+): \d+ required .* missing)")))
    return typed_name(sub, m[1], args) + " needs a value";
  if (dynamic_cast<const CLI::ConversionError*>(&e) &&
      std::regex_match(what, m, std::regex(R"(Could not convert: (\S+) = (.*))"))) {
    const bool numeric = numeric_option(sub, m[1]);
    return typed_name(sub, m[1], args) + ": '" + m[2].str() + "' is " + (numeric ? "not a number" : "not a valid value");
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e)) {
    // CLI11's own range check says "Value abc not in range 1 to 10" for a word.
    if (std::regex_match(what, m, std::regex(R"((\S+): Value (.*) not in range .*)")) && !is_number(m[2]))
      return typed_name(sub, m[1], args) + ": '" + m[2].str() + "' is not a number";
    if (std::regex_match(what, m, std::regex(R"((\S+): (.*))"))) return typed_name(sub, m[1], args) + ": " + m[2].str();
  }
  if (std::regex_search(what, m, std::regex(R"(not expected: (.*)$)"))) {
    // CLI11 lists the arguments last first.
    const std::string list = m[1];
    return unexpected(list.substr(list.find_last_of(' ') + 1));
  }
  return what;
}

// The first of `extras` to report: a flag if there is one.
std::string first_extra(const std::vector<std::string>& extras) {
  for (const auto& a : extras)
    if (a.size() > 1 && a[0] == '-' && !is_number(a)) return a;
  return extras.front();
}

}  // namespace

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string command;
  bool help = false;
  for (const auto& a : args) {
    if (a == "-h" || a == "--help" || a == "--version") help = true;
    if (!a.empty() && a[0] != '-') {
      command = a;
      break;
    }
  }
  if (command.empty() && !help) {
    const std::string what = args.empty() ? "no command given" : unexpected(first_extra(args)) + " before a command";
    print_error("", what + "; the commands are " + command_names(app) + " (kagent --help)");
    return kUsageError;
  }
  CLI::App* sub = nullptr;
  if (!command.empty()) {
    for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
      if (s->check_name(command)) sub = s;
    if (!sub) {
      print_error("", "unknown command '" + command + "'; the commands are " + command_names(app) + " (kagent --help)");
      return kUsageError;
    }
    // Unknown arguments are collected rather than thrown, so the message can name them.
    sub->allow_extras();
  }
  app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // An unknown flag explains what follows from it (its value taken for a positional argument).
    if (sub && !sub->remaining().empty()) print_error(command, unexpected(first_extra(sub->remaining())));
    else print_error(command, plain_words(e, sub, args));
    return kUsageError;
  }
  for (const CLI::App* a : {static_cast<const CLI::App*>(sub), static_cast<const CLI::App*>(&app)}) {
    if (a && !a->remaining().empty()) {
      print_error(command, unexpected(first_extra(a->remaining())));
      return kUsageError;
    }
  }
  // The settings only workers read: checked for the commands that start them.
  if (auto wrong = sub && has_eval_flags(*sub) ? wrong_environment_setting(sub->count("--cache-dir") > 0) : std::nullopt) {
    print_error(command, *wrong);
    return kUsageError;
  }
  return std::nullopt;
}

}  // namespace kagent::cli
