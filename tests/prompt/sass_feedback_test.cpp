// The machine-code lines of the feedback: one per kernel, the derived rules, the missing
// SASS line, each cut to its stated limit.
#include <doctest/doctest.h>

#include <string>

#include "prompt/feedback.h"
#include "prompt/prompt_builder.h"
#include "prompt/sass_feedback.h"

using namespace kagent;
using namespace kagent::prompt;

namespace {

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

SassKernel scalar_copy() {
  SassKernel k;
  k.kernel = "copy_scalar(float const*, float*, long)";
  k.mangled = "_Z11copy_scalarPKfPfl";
  k.registers = 12;
  k.instructions = 20;
  k.global_loads = {{"32", 1}};
  k.global_stores = {{"32", 1}};
  k.branches = 1;
  return k;
}

SassKernel spilling_gemm() {
  SassKernel k;
  k.kernel = "void gemm<128>(float const*, float const*, float*, int, int, int)";
  k.mangled = "_Z4gemmILi128EEvPKfS1_Pfiii";
  k.registers = 255;
  k.shared_bytes = 16384;
  k.local_bytes = 64;
  k.instructions = 900;
  k.global_loads = {{"128", 8}};
  k.shared_loads = {{"128", 16}};
  k.ffma = 512;
  k.local_loads = 6;
  k.local_stores = 4;
  k.local_in_loops = 7;
  k.loops = 1;
  k.branches = 3;
  k.barriers = 2;
  return k;
}

EvalResult with_sass(std::vector<SassKernel> kernels, const std::string& bound) {
  EvalResult r;
  r.status = Status::Correct;
  CompileInfo c;
  c.ok = true;
  SassInfo s;
  s.available = true;
  s.arch = "sm_90a";
  s.file = "candidates/s0-t1.sass.gz";
  s.kernels = std::move(kernels);
  c.sass = s;
  r.compile = c;
  r.profile = {{"text", "profile text"},
               {"kernels", {{{"mangled", "_Z11copy_scalarPKfPfl"}, {"bound", {{"class", bound}}}}}},
               {"bound", {{"class", bound}}}};
  return r;
}

ProblemSpec problem(const std::string& source) {
  ProblemSpec s;
  s.source = source;
  return s;
}

}  // namespace

TEST_CASE("SASS kernel line: widths, arithmetic, tensor cores, local memory") {
  const std::string a = sass_kernel_line(scalar_copy());
  CHECK(a == "copy_scalar (12 registers, 0 B shared, 0 B local): 20 instructions; global loads 1x32-bit; "
             "global stores 1x32-bit; no tensor-core instruction; 1 branch");
  const std::string b = sass_kernel_line(spilling_gemm());
  CHECK(has(b, "gemm<128> (255 registers, 16384 B shared, 64 B local)"));
  CHECK(has(b, "shared loads 16x128-bit"));
  CHECK(has(b, "FP32 512 FFMA, 0 FMUL, 0 FADD"));
  CHECK(has(b, "3 branches (1 loop); 2 barriers"));
  CHECK(has(b, "local memory 6 loads, 4 stores (7 inside loops)"));
  SassKernel w;
  w.kernel = "wmma_tile";
  w.tensor = {{"HMMA.16816.F32", 2}};
  CHECK(has(sass_kernel_line(w), "tensor cores: 2 HMMA.16816.F32"));
}

TEST_CASE("SASS rules: 32-bit loads on a memory-bound kernel, no tensor cores on a GEMM, spills in a loop") {
  const ProblemSpec gemm = problem("class Model(nn.Module):\n    def forward(self, a, b):\n        return torch.matmul(a, b)\n");
  const ProblemSpec relu = problem("class Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n");
  CHECK(gemm_shaped(gemm));
  CHECK(gemm_shaped(problem("self.linear = nn.Linear(10, 20)")));
  CHECK(gemm_shaped(problem("return x @ w")));
  CHECK_FALSE(gemm_shaped(relu));

  auto f = sass_findings(with_sass({scalar_copy()}, "memory"), &relu);
  REQUIRE(f.size() == 1);
  CHECK(has(f[0], "copy_scalar is memory-bound but all its 2 global loads/stores are 32-bit or narrower"));
  // the same kernel on a latency-bound call: no rule
  CHECK(sass_findings(with_sass({scalar_copy()}, "latency"), &relu).empty());

  f = sass_findings(with_sass({spilling_gemm()}, "compute"), &gemm);
  REQUIRE(f.size() == 2);
  CHECK(has(f[0], "no kernel uses tensor cores"));
  CHECK(has(f[1], "gemm<128> spills inside its hot loop: 7 local-memory loads/stores"));

  SassKernel tc = spilling_gemm();
  tc.local_in_loops = 0;
  tc.tensor = {{"HGMMA.64x128x16.F32", 4}};
  CHECK(sass_findings(with_sass({tc}, "compute"), &gemm).empty());
}

TEST_CASE("feedback: the SASS section after resources, lines cut to the stated limit") {
  EvalResult r = with_sass({scalar_copy(), spilling_gemm()}, "memory");
  const ProblemSpec gemm = problem("y = torch.matmul(a, b)");
  FeedbackLimits limits;
  limits.sass.kernels = 1;
  limits.sass.line_bytes = 60;
  const std::string text = render_template(TemplateSet().text("feedback"), feedback_variables(r, &gemm, limits));
  CHECK(has(text, "## Machine code (SASS for sm_90a, static counts per kernel)"));
  CHECK(has(text, "- ... and 1 more kernels"));
  CHECK(has(text, "- note: "));
  CHECK(has(text, "more bytes cut]"));
  // every kernel and note line within the limit plus its marker
  size_t pos = text.find("## Machine code");
  std::string line;
  for (size_t start = pos; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    line = text.substr(start, end - start);
    if (line.rfind("- ", 0) == 0) CHECK(line.size() <= 2 + 8 + 60 + 30);  // "- note: " + limit + " [... N more bytes cut]"
    start = end + 1;
  }
  CHECK(text.find("## Resources") == std::string::npos);  // no ptxas rows in this result
}

TEST_CASE("feedback: a candidate without SASS keeps its verdict and says why") {
  EvalResult r;
  r.status = Status::Correct;
  CompileInfo c;
  c.ok = true;
  SassInfo s;
  s.arch = "sm_90a";
  s.missing_reason = "cuobjdump failed (exit 255): cuobjdump info    : File 'candidate.o' does not contain device code";
  c.sass = s;
  r.compile = c;
  const std::string text = render_template(TemplateSet().text("feedback"), feedback_variables(r));
  CHECK(has(text, "# Result: CORRECT"));
  CHECK(has(text, "SASS missing: cuobjdump failed (exit 255): cuobjdump info    : File 'candidate.o' does not contain "
                  "device code"));
  // no SASS section at all where nothing was disassembled (a failed compile)
  r.compile->sass.reset();
  CHECK_FALSE(has(render_template(TemplateSet().text("feedback"), feedback_variables(r)), "Machine code"));
}
