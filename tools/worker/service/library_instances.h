// Every evaluation of a native candidate gets an instance of its shared object of its own.
// dlopen of a file already loaded returns the same instance, static state and all: a
// candidate whose first call does something (a fork bomb, a cache it fills) would do it only in
// the first evaluation of a worker, and a second one would judge a different program. So the
// first load of an artifact is the file itself; every later one is a private copy in the
// scratch folder whose operator namespace (the data symbol `kagent_op_namespace` the binding
// registers its op under, compiler/binding_generator.cpp) is renamed in place, same length, so
// the copy registers its own op beside the first.
#pragma once

#include <map>
#include <string>

namespace kagent::worker {

struct LibraryInstance {
  std::string path;     // what to dlopen
  std::string op_name;  // its forward, "<namespace>::forward"
};

class LibraryInstances {
 public:
  // `folder`: where the copies go (the worker's scratch folder).
  explicit LibraryInstances(std::string folder);
  // The instance to load for one evaluation of `artifact` (whose op is `op_name`). An artifact
  // without the namespace symbol (built before it existed) is loaded as it is.
  LibraryInstance fresh(const std::string& artifact, const std::string& op_name);

 private:
  std::string folder_;
  std::map<std::string, int> loads_;  // by artifact
};

// Overwrites the NUL-terminated string held by the ELF data symbol `symbol` in the file `in`,
// which must read `from`, with `to` (same length), writing the result to `out`. Throws
// std::runtime_error naming what did not match.
void rename_elf_string(const std::string& in, const std::string& out, const std::string& symbol,
                       const std::string& from, const std::string& to);

}  // namespace kagent::worker
