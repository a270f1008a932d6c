// Whole text files stored gzip-compressed (zlib), for large tool output kept next to a run
// (disassembly): `zcat` opens them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kagent {

// Writes `text` compressed to `path` (through a temp file and a rename). Throws
// std::runtime_error naming the file when it cannot.
void write_gzip_file(const std::filesystem::path& path, std::string_view text);

// The decompressed content of a gzip file. Throws std::runtime_error naming the file when it
// cannot be opened or is damaged.
std::string read_gzip_file(const std::filesystem::path& path);

}  // namespace kagent
