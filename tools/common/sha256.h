// SHA-256 as lowercase hex, for content-hash caches (compile cache, spec cache).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace kagent {

// SHA-256 of the bytes, as 64 lowercase hex characters.
std::string sha256_hex(std::string_view data);

// SHA-256 of a file's bytes. Throws std::runtime_error when it cannot be read.
std::string sha256_file_hex(const std::filesystem::path& path);

// Incremental hashing: feed parts with update(), read hex_digest() once.
// Each part is length-prefixed, so ("ab","c") and ("a","bc") hash differently.
class Sha256 {
 public:
  Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  ~Sha256();
  Sha256& update(std::string_view part);       // length-prefixed field
  Sha256& update_raw(std::string_view bytes);  // plain bytes
  std::string hex_digest();                    // finishes the hash

 private:
  void* ctx_;  // EVP_MD_CTX*, kept opaque so OpenSSL headers stay out of users
};

}  // namespace kagent
