#include "common/sha256.h"

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <stdexcept>

namespace kagent {

namespace {
EVP_MD_CTX* ctx_of(void* p) { return static_cast<EVP_MD_CTX*>(p); }

std::string to_hex(const unsigned char* d, unsigned n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (unsigned i = 0; i < n; ++i) {
    s[2 * i] = kHex[d[i] >> 4];
    s[2 * i + 1] = kHex[d[i] & 15];
  }
  return s;
}
}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(ctx_of(ctx_), EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx_of(ctx_));
    throw std::runtime_error("sha256: EVP_DigestInit_ex failed");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_of(ctx_)); }

Sha256& Sha256::update_raw(std::string_view bytes) {
  if (EVP_DigestUpdate(ctx_of(ctx_), bytes.data(), bytes.size()) != 1)
    throw std::runtime_error("sha256: EVP_DigestUpdate failed");
  return *this;
}

Sha256& Sha256::update(std::string_view part) {
  std::array<unsigned char, 8> len{};
  uint64_t n = part.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  update_raw(std::string_view(reinterpret_cast<const char*>(len.data()), len.size()));
  return update_raw(part);
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  if (EVP_DigestFinal_ex(ctx_of(ctx_), md, &n) != 1) throw std::runtime_error("sha256: EVP_DigestFinal_ex failed");
  return to_hex(md, n);
}

std::string sha256_hex(std::string_view data) { return Sha256().update_raw(data).hex_digest(); }

std::string sha256_file_hex(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("sha256: cannot read " + path.string());
  Sha256 h;
  std::array<char, 1 << 16> buf;
  while (in) {
    in.read(buf.data(), buf.size());
    if (in.gcount() > 0) h.update_raw(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  if (in.bad()) throw std::runtime_error("sha256: read error on " + path.string());
  return h.hex_digest();
}

}  // namespace kagent
