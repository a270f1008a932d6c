// `kagent report RUN [--out page.html]`: one self-contained HTML page for a solve run or a
// collection. Exit statuses: report/report_error.h (README, "kagent report").
#pragma once

#include "cli/command.h"

namespace kagent::cli {

Command add_report_command(CLI::App& app);

}  // namespace kagent::cli
