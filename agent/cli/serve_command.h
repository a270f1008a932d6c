// `kagent serve --data DIR [--problems SUITE] [--port 8000] [--token T]`: the HTTP environment
// server RL trainers connect to (agent/serve, docs/serve.md). It holds --workers-per-gpu workers
// per GPU and a compile pool for its whole life and keeps every episode under DIR (locked: one
// server per DIR), so a restart on the same DIR loses no finished step. Stops on SIGINT/SIGTERM.
// Exit statuses: serve_exit below.
#pragma once

#include "cli/command.h"

namespace kagent::cli {

namespace serve_exit {
inline constexpr int kStopped = 0;        // stopped by a signal
inline constexpr int kUsage = 2;
inline constexpr int kBadInput = 3;       // the data folder or suite cannot be used
inline constexpr int kCannotListen = 5;   // the address is taken or not ours
inline constexpr int kUnavailable = 6;    // built without cpp-httplib (or, for --queue redis://, hiredis)
inline constexpr int kDataInUse = 7;      // another kagent serve holds the --data folder (its lock)
inline constexpr int kQueueUnreachable = 15;  // --queue redis://HOST:PORT cannot be reached at start
inline constexpr int kInternal = 14;
inline constexpr int kStoppedCut = 16;    // stopped by a second signal or --stop-grace, work in flight unfinished
}  // namespace serve_exit

Command add_serve_command(CLI::App& app);

}  // namespace kagent::cli
