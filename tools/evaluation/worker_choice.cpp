#include "evaluation/worker_choice.h"

#include <stdexcept>

#include "common/sha256.h"

namespace kagent {

std::string problem_affinity_key(const std::string& path) {
  if (path.empty()) return path;
  try {
    return "text:" + sha256_file_hex(path);
  } catch (const std::exception&) {
    return path;  // the request reports the missing file; it matches nothing meanwhile
  }
}

WorkerChoice choose_worker(const std::vector<const std::set<std::string>*>& free_workers,
                           const std::vector<const std::string*>& waiting, bool front_overdue) {
  if (!front_overdue)
    for (size_t q = 0; q < waiting.size(); ++q) {
      if (waiting[q]->empty()) continue;
      for (size_t w = 0; w < free_workers.size(); ++w)
        if (free_workers[w]->count(*waiting[q])) return {q, w};
    }
  return {0, 0};
}

}  // namespace kagent
