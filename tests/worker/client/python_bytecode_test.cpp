// The worker's bytecode, written by the orchestrator with the real Python and torch: where
// Python will look for it, once, and never in a folder someone else may write.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "build_info.h"
#include "common/files.h"
#include "common/subprocess.h"
#include "worker/client/python_bytecode.h"

using namespace kagent;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST_CASE("the worker's bytecode: written once where PYTHONPYCACHEPREFIX finds it, refused in a folder not ours alone") {
  const fs::path dir = fs::temp_directory_path() / ("kagent-bytecode-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0755);
  const char* configured = std::getenv("KAGENT_PYCACHE_DIR");
  const fs::path folder = dir / "pycache";
  if (!configured) CHECK(worker_bytecode_folder(dir) == folder);  // reachable by another uid: inside the cache

  const std::string python = build::kPythonExecutable;
  std::string why;
  REQUIRE_MESSAGE(ensure_worker_bytecode(python, folder, 600s, &why), why);
  // Python finds torch's bytecode there, as a worker with the variable set will.
  SpawnOptions so;
  so.argv = {python, "-c",
             "import importlib.util, os, torch; p = importlib.util.cache_from_source(torch.__file__); "
             "print(p.startswith(os.environ['PYTHONPYCACHEPREFIX']), os.path.exists(p))"};
  so.env_set = {"PYTHONPYCACHEPREFIX=" + folder.string(), "PYTHONDONTWRITEBYTECODE=1", "TMPDIR=" + dir.string()};
  const RunResult r = run_command(so, 300s);
  REQUIRE(r.succeeded());
  CHECK(r.output.find("True True") != std::string::npos);
  struct stat st {};
  REQUIRE(::stat(folder.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0755);  // the sandbox's uid reads it, only this user writes it

  // Done once: the marker answers the next process at once.
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(ensure_worker_bytecode(python, folder, 600s, &why));
  CHECK(std::chrono::steady_clock::now() - t0 < 1s);
  for (const auto& e : fs::directory_iterator(folder))  // its temporary folder is gone
    CHECK(e.path().filename().string().rfind(".tmp-", 0) != 0);

  // A folder of another user's is not used: what is there would run in every worker. (Making
  // one takes root; elsewhere the check stands untested here.)
  if (::geteuid() == 0) {
    const fs::path theirs = dir / "theirs";
    fs::create_directories(theirs);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    why.clear();
    CHECK_FALSE(ensure_worker_bytecode(python, theirs, 60s, &why));
    CHECK(why.find("is not this user's alone") != std::string::npos);
    CHECK_FALSE(fs::exists(theirs / "written-for"));
  } else {
    MESSAGE("not root: a folder of another user's cannot be made, its refusal is not checked");
  }

  // A Python that fails: false, with its words, and no marker.
  const fs::path other = dir / "other";
  why.clear();
  CHECK_FALSE(ensure_worker_bytecode("/bin/false", other, 60s, &why));
  CHECK(why.find("failed") != std::string::npos);
  CHECK_FALSE(fs::exists(other / "written-for"));
  fs::remove_all(dir);
}

TEST_CASE("the worker's bytecode folder: in the cache where the worker can read it, else none, unless configured") {
  const char* configured = std::getenv("KAGENT_PYCACHE_DIR");
  const std::string saved = configured ? configured : "";
  ::unsetenv("KAGENT_PYCACHE_DIR");
  const fs::path dir = fs::temp_directory_path() / ("kagent-bytecode-private-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  ::chmod(dir.c_str(), 0700);
  // Root's workers run as another uid, which cannot reach a private cache; others' run as them.
  CHECK(worker_bytecode_folder(dir) == (::geteuid() == 0 ? fs::path() : dir / "pycache"));
  ::setenv("KAGENT_PYCACHE_DIR", "/somewhere/pycache", 1);
  CHECK(worker_bytecode_folder(dir) == fs::path("/somewhere/pycache"));
  saved.empty() ? ::unsetenv("KAGENT_PYCACHE_DIR") : ::setenv("KAGENT_PYCACHE_DIR", saved.c_str(), 1);
  fs::remove_all(dir);
}
