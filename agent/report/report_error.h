// Why a report could not be written, with the exit status `kagent report` gives for it.
// Anything a page can still show (a torn line, a run in progress, an unreadable file among
// readable ones) is a warning on the page instead, never one of these.
#pragma once

#include <stdexcept>
#include <string>

namespace kagent::report {

// The exit statuses of `kagent report` (README).
namespace report_exit {
inline constexpr int kWritten = 0;
inline constexpr int kUsage = 2;
inline constexpr int kNotFound = 3;      // the folder does not exist
inline constexpr int kNotARun = 4;       // neither a solve run nor a collection
inline constexpr int kUnreadable = 5;    // a run whose own settings (config.json, manifest.json) cannot be read
inline constexpr int kWriteFailed = 6;   // the page could not be written
inline constexpr int kInternal = 14;
}  // namespace report_exit

class ReportError : public std::runtime_error {
 public:
  ReportError(int exit_status, const std::string& message) : std::runtime_error(message), exit_status_(exit_status) {}
  int exit_status() const { return exit_status_; }

 private:
  int exit_status_;
};

}  // namespace kagent::report
