#include "cli/report_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/errors.h"
#include "report/report_error.h"
#include "report/report_writer.h"

namespace kagent::cli {

namespace fs = std::filesystem;

namespace {

struct ReportArgs {
  std::string run, out;
};

int run_report(const ReportArgs& a) {
  const fs::path out = a.out.empty() ? report::default_report_path(a.run) : fs::path(a.out);
  report::write_report(a.run, out);
  std::cout << out.string() << "\n";
  return report::report_exit::kWritten;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand("report", "Write one self-contained HTML page for a solve run or a collection");
  sub->add_option("run", a->run, "a run folder of kagent solve, or a collection folder of kagent collect")->required();
  sub->add_option("-o,--out", a->out, "where the page goes (default: RUN/report.html)");
  return Command{sub, [a] {
                   try {
                     return run_report(*a);
                   } catch (const report::ReportError& e) {
                     print_error("report", e.what());
                     return e.exit_status();
                   } catch (const std::exception& e) {
                     print_error("report", std::string("internal: ") + e.what());
                     return report::report_exit::kInternal;
                   }
                 }};
}

}  // namespace kagent::cli
