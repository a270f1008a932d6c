#include "compiler/sass_summary.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>

#include "compiler/ptxas_resources.h"

namespace kagent {

namespace {

struct Instruction {
  long address = 0;
  std::string opcode;               // "LDG", "HMMA"
  std::string full;                 // "LDG.E.128", "HMMA.16816.F32"
  std::vector<std::string> modifiers;
  std::string operands;
};

// "        /*00c0*/      @!P0 LDG.E.128 R8, desc[UR4][R2.64] ;   /* 0x... */"
bool parse_instruction(const std::string& line, Instruction& ins) {
  static const std::regex re(R"(^\s*/\*([0-9a-fA-F]+)\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Za-z0-9_x]+)*)\s*([^;]*);)");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return false;
  ins.address = std::strtol(m[1].str().c_str(), nullptr, 16);
  ins.full = m[2].str();
  ins.operands = m[3].str();
  std::stringstream parts(ins.full);
  std::string part;
  std::getline(parts, ins.opcode, '.');
  ins.modifiers.clear();
  while (std::getline(parts, part, '.')) ins.modifiers.push_back(part);
  return true;
}

// Bits per thread of a load or store: U8/S8, U16/S16, 64, 128, 256; 32 otherwise.
std::string access_width(const Instruction& ins) {
  for (const auto& m : ins.modifiers) {
    if (m == "U8" || m == "S8") return "8";
    if (m == "U16" || m == "S16") return "16";
    if (m == "64" || m == "128" || m == "256") return m;
  }
  return "32";
}

// The branch target of BRA/BRX/JMP/CALL: the last hex number among the operands.
std::optional<long> branch_target(const Instruction& ins) {
  static const std::regex hex(R"(0x([0-9a-fA-F]+))");
  std::optional<long> target;
  for (std::sregex_iterator it(ins.operands.begin(), ins.operands.end(), hex), end; it != end; ++it)
    target = std::strtol((*it)[1].str().c_str(), nullptr, 16);
  return target;
}

const std::set<std::string> kTensorOps = {"HMMA",  "IMMA",  "DMMA",    "BMMA",     "HGMMA",   "IGMMA",   "QGMMA",
                                          "BGMMA", "OMMA",  "QMMA",    "UTCHMMA",  "UTCIMMA", "UTCQMMA", "UTCOMMA",
                                          "UTCBMMA"};
const std::set<std::string> kBranchOps = {"BRA", "BRX", "JMP", "JMX", "CALL", "RET"};

struct Block {
  SassKernel kernel;
  std::vector<Instruction> code;
};

void summarize_block(Block& b) {
  SassKernel& k = b.kernel;
  std::vector<std::pair<long, long>> loops;  // [target, branch address]
  for (const auto& ins : b.code) {
    if (kBranchOps.count(ins.opcode) && ins.opcode != "RET") {
      auto target = branch_target(ins);
      if (target && *target < ins.address) loops.emplace_back(*target, ins.address);
    }
  }
  auto in_loop = [&](long address) {
    for (const auto& [from, to] : loops)
      if (address >= from && address <= to) return true;
    return false;
  };
  k.loops = static_cast<int>(loops.size());
  for (const auto& ins : b.code) {
    const std::string& op = ins.opcode;
    if (op == "NOP") continue;
    ++k.instructions;
    if (op == "LDG") ++k.global_loads[access_width(ins)];
    else if (op == "STG") ++k.global_stores[access_width(ins)];
    else if (op == "LDS") ++k.shared_loads[access_width(ins)];
    else if (op == "STS") ++k.shared_stores[access_width(ins)];
    else if (op == "LDSM") ++k.ldmatrix;
    else if (op == "LDGSTS" || op == "UTMALDG" || op == "UBLKCP") ++k.async_copies;
    else if (op == "ATOM" || op == "ATOMG" || op == "ATOMS" || op == "RED" || op == "REDG") ++k.atomics;
    else if (op == "LDL" || op == "STL") {
      (op == "LDL" ? k.local_loads : k.local_stores)++;
      if (in_loop(ins.address)) ++k.local_in_loops;
    } else if (op == "FFMA") ++k.ffma;
    else if (op == "FMUL") ++k.fmul;
    else if (op == "FADD") ++k.fadd;
    else if (op == "DFMA" || op == "DMUL" || op == "DADD") ++k.fp64;
    else if (op == "HFMA2" || op == "HMUL2" || op == "HADD2") ++k.fp16;
    else if (kTensorOps.count(op)) ++k.tensor[ins.full];
    else if (op == "BAR" || op == "SYNCS") ++k.barriers;
    else if (kBranchOps.count(op)) {
      // Every function ends in "BRA <itself>", a trap for runaway execution, not a branch.
      auto target = branch_target(ins);
      if (!(op == "BRA" && target && *target == ins.address)) ++k.branches;
    }
  }
}

struct Usage {
  int registers = 0;
  int64_t shared = 0, local = 0, stack = 0;
};

}  // namespace

std::vector<SassKernel> summarize_sass(std::string_view text) {
  static const std::regex function_re(R"(^\s*Function : (\S+))");
  static const std::regex usage_name_re(R"(^\s*Function (\S+):\s*$)");
  static const std::regex usage_re(R"(REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+))");
  std::map<std::string, Usage> usage;
  std::vector<Block> blocks;
  std::string pending_usage;  // the name of the last "-res-usage" Function line
  std::istringstream in{std::string(text)};
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, function_re)) {
      Block b;
      b.kernel.mangled = m[1].str();
      b.kernel.kernel = demangle(b.kernel.mangled);
      blocks.push_back(std::move(b));
      continue;
    }
    if (std::regex_search(line, m, usage_name_re)) {
      pending_usage = m[1].str();
      continue;
    }
    if (!pending_usage.empty() && std::regex_search(line, m, usage_re)) {
      usage[pending_usage] = {std::atoi(m[1].str().c_str()), std::atoll(m[3].str().c_str()),
                              std::atoll(m[4].str().c_str()), std::atoll(m[2].str().c_str())};
      pending_usage.clear();
      continue;
    }
    Instruction ins;
    if (!blocks.empty() && parse_instruction(line, ins)) blocks.back().code.push_back(std::move(ins));
  }
  std::vector<SassKernel> out;
  for (auto& b : blocks) {
    summarize_block(b);
    if (auto it = usage.find(b.kernel.mangled); it != usage.end()) {
      b.kernel.registers = it->second.registers;
      b.kernel.shared_bytes = it->second.shared;
      b.kernel.local_bytes = it->second.local;
      b.kernel.stack_bytes = it->second.stack;
    }
    out.push_back(std::move(b.kernel));
  }
  return out;
}

}  // namespace kagent
