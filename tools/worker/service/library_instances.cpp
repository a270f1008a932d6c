#include "worker/service/library_instances.h"

#include <elf.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "common/files.h"

namespace kagent::worker {

namespace fs = std::filesystem;

namespace {

constexpr char kNamespaceSymbol[] = "kagent_op_namespace";

template <class T>
const T& at(const std::string& data, uint64_t offset, const std::string& path) {
  if (offset > data.size() || data.size() - offset < sizeof(T))
    throw std::runtime_error(path + ": truncated ELF file");
  return *reinterpret_cast<const T*>(data.data() + offset);
}

// The file offset of the bytes of `symbol`'s value, and its size.
std::pair<uint64_t, uint64_t> symbol_bytes(const std::string& data, const std::string& symbol, const std::string& path) {
  if (data.size() < sizeof(Elf64_Ehdr) || std::memcmp(data.data(), ELFMAG, SELFMAG) != 0 ||
      data[EI_CLASS] != ELFCLASS64)
    throw std::runtime_error(path + ": not a 64-bit ELF file");
  const auto& eh = at<Elf64_Ehdr>(data, 0, path);
  auto section = [&](size_t i) -> const Elf64_Shdr& { return at<Elf64_Shdr>(data, eh.e_shoff + i * eh.e_shentsize, path); };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr& sh = section(i);
    if ((sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || sh.sh_entsize == 0 || sh.sh_link >= eh.e_shnum) continue;
    const Elf64_Shdr& names = section(sh.sh_link);
    for (uint64_t k = 0; k < sh.sh_size / sh.sh_entsize; ++k) {
      const auto& sym = at<Elf64_Sym>(data, sh.sh_offset + k * sh.sh_entsize, path);
      if (sym.st_name >= names.sh_size || sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh.e_shnum) continue;
      const char* name = data.data() + names.sh_offset + sym.st_name;
      if (std::strncmp(name, symbol.c_str(), names.sh_size - sym.st_name) != 0) continue;
      const Elf64_Shdr& holder = section(sym.st_shndx);
      if (holder.sh_type == SHT_NOBITS || sym.st_value < holder.sh_addr) continue;
      return {holder.sh_offset + (sym.st_value - holder.sh_addr), sym.st_size};
    }
  }
  throw std::runtime_error(fmt::format("{}: no symbol {}", path, symbol));
}

}  // namespace

void rename_elf_string(const std::string& in, const std::string& out, const std::string& symbol,
                       const std::string& from, const std::string& to) {
  if (from.size() != to.size()) throw std::runtime_error("rename_elf_string: the names differ in length");
  std::string data = read_file(in);
  const auto [offset, size] = symbol_bytes(data, symbol, in);
  if (size != from.size() + 1 || offset + size > data.size() || data.compare(offset, size, from.c_str(), size) != 0)
    throw std::runtime_error(fmt::format("{}: symbol {} does not hold \"{}\"", in, symbol, from));
  data.replace(offset, from.size(), to);
  write_file_atomic(out, data);
}

LibraryInstances::LibraryInstances(std::string folder) : folder_(std::move(folder)) {}

LibraryInstance LibraryInstances::fresh(const std::string& artifact, const std::string& op_name) {
  const int n = loads_[artifact]++;
  if (n == 0) return {artifact, op_name};
  const auto sep = op_name.find("::");
  const std::string ns = op_name.substr(0, sep);
  if (sep == std::string::npos || ns.size() < 4) return {artifact, op_name};
  // Same length: the last four characters count the instances (an op of that name taken by
  // another candidate already is skipped).
  for (int k = n;; ++k) {
    const std::string renamed = ns.substr(0, ns.size() - 4) + fmt::format("{:04x}", k & 0xffff);
    if (renamed == ns || c10::Dispatcher::singleton().findOp({renamed + "::forward", ""})) continue;
    const fs::path copy = fs::path(folder_) / "kagent-instances" / (renamed + ".so");
    try {
      fs::create_directories(copy.parent_path());
      rename_elf_string(artifact, copy.string(), kNamespaceSymbol, ns, renamed);
    } catch (const std::exception&) {
      return {artifact, op_name};  // not renameable (an old build): shared with the earlier load
    }
    return {copy.string(), renamed + op_name.substr(sep)};
  }
}

}  // namespace kagent::worker
