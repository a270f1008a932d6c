#include "collect/charges_file.h"

#include <fcntl.h>

#include <cerrno>
#include <system_error>

#include "common/fd.h"
#include "common/files.h"
#include "common/utf8.h"
#include "trajectory/trajectory.h"

namespace kagent::collect {

void append_charges(const std::filesystem::path& dir, const std::vector<WorkerCharge>& charges) {
  if (charges.empty()) return;
  std::string lines;
  for (const auto& c : charges) {
    nlohmann::json j = c;
    j["at"] = traj::now_iso8601();
    lines += dump_json(j) + "\n";  // messages quote the candidate
  }
  const auto path = dir / kChargesFile;
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd) throw std::system_error(errno, std::generic_category(), "cannot open " + path.string());
  write_all(fd.get(), lines, path);
}

}  // namespace kagent::collect
