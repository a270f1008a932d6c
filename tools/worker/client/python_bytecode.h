// Bytecode for the worker's Python, kept in kagent's cache. Python compiles a module's source on
// import and keeps the bytecode beside it where it may write there; a package tree installed
// without bytecode (uv's default) on a volume the user cannot write gets none, and every worker
// compiles torch again. On the H200 machine (/opt/torch/.venv: 0 .pyc files for torch's 2,141
// .py) that is 8 s of each cold `kagent eval`. The sandboxed worker may not write the bytecode,
// and must not: what it wrote would run in every later worker. So this process writes it, once
// per cache, into a folder of its own by importing what a worker imports, and the workers read
// it through PYTHONPYCACHEPREFIX. Python checks each file against its source's size and mtime:
// a changed package is compiled from source again, never run stale.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace kagent {

// What a worker imports before its first problem: torch, dynamo (a spec's meta forward pulls it
// in), sympy, numpy.random.
inline constexpr const char* kWorkerImports = "import numpy.random, sympy, torch, torch._dynamo";

// Where: $KAGENT_PYCACHE_DIR when set; else `cache_dir`/pycache where the worker can read it
// (it runs as this user, or the sandbox's uid, which root's workers switch to, can reach the
// cache); else empty: none, and the workers compile from source as before (root with its
// cache under /root: set KAGENT_CACHE_DIR or KAGENT_PYCACHE_DIR to a folder others can reach).
std::filesystem::path worker_bytecode_folder(const std::filesystem::path& cache_dir);

// Writes the bytecode of kWorkerImports for `python` into `folder` unless a marker there says
// it was done for that interpreter; other kagent processes doing the same wait for the first
// (a lock in the folder). The child runs at most `limit` and dies with this thread. Returns
// false where it could not (the workers then compile from source, as before): never throws.
bool ensure_worker_bytecode(const std::string& python, const std::filesystem::path& folder,
                            std::chrono::milliseconds limit, std::string* why = nullptr);

}  // namespace kagent
