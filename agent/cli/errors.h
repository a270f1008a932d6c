// The one way the kagent command line reports an error: a single line on stderr,
// "kagent <command>: error: <message>". Usage errors (bad flags, missing arguments, an unknown
// command) all exit with kUsageError, the status every command's table gives them.
#pragma once

#include <optional>
#include <string_view>

#include <CLI/CLI.hpp>

namespace kagent::cli {

inline constexpr int kUsageError = 2;

// Prints "kagent <command>: error: <message>" (no command: "kagent: error: <message>"), the
// message through plain_message.
void print_error(std::string_view command, std::string_view message);
// Prints "kagent <command>: warning: <message>": something the user should know, not a failure.
void print_warning(std::string_view command, std::string_view message);

// `message` in plain words, as UTF-8 text: a library's exception text inside it
// (nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 1: ...",
// libstdc++'s "filesystem error: cannot create directories: Permission denied [dir]") is said
// the way a user reads it ("not valid JSON (line 1, column 1)", "cannot create directories dir:
// Permission denied"); bytes that are not UTF-8 (a bad file's "last read: '...'") never reach
// the terminal. The net under every error line: readers that know the file say more.
std::string plain_message(std::string_view message);

// Parses the command line into `app`, whose subcommands are the commands. Returns nullopt when
// a command is to run; otherwise the exit status: 0 after --help or --version, kUsageError
// after the one error line, which names the bad flag and value in plain words.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv);

}  // namespace kagent::cli
