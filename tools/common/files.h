// Whole-file reads and atomic writes: every cache and run folder of kagent publishes its
// files the same way (temp file in the same folder, then rename), so a reader never sees
// half a file and a killed writer leaves only a stray temp file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kagent {

// Throws std::runtime_error when the file cannot be read.
std::string read_file(const std::filesystem::path& path);
// The same, empty when the file cannot be read: for /proc entries of processes that may be gone.
std::string read_file_or_empty(const std::filesystem::path& path);

// Writes all of `data` to `fd`; throws std::system_error naming `path`.
void write_all(int fd, std::string_view data, const std::filesystem::path& path);

// Replaces `path` atomically with `data`. `durable`: fsync the file and its folder too.
// Throws std::system_error; the temp file is removed on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view data, bool durable = false);

// fsync a folder, so a rename in it survives a crash (best effort).
void fsync_dir(const std::filesystem::path& dir);

}  // namespace kagent
