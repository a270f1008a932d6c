#include "trajectory/sass_file.h"

#include <system_error>

namespace kagent::traj {

namespace fs = std::filesystem;

void keep_sass_beside(EvalResult& result, const fs::path& candidate_file, const fs::path& run_dir) {
  if (!result.compile || !result.compile->sass || !result.compile->sass->available) return;
  SassInfo& sass = *result.compile->sass;
  fs::path dest = candidate_file;
  dest.replace_extension(".sass.gz");
  std::error_code ec;
  fs::copy_file(sass.file, dest, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    sass.available = false;
    sass.missing_reason = "cannot copy " + sass.file + " into the run folder: " + ec.message();
    sass.file.clear();
    return;
  }
  sass.file = dest.lexically_relative(run_dir).string();
}

}  // namespace kagent::traj
