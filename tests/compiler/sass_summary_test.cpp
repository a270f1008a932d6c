// The SASS summary on fixed cuobjdump output (CUDA 13, sm_90a), and the disassembler's
// failures turned into a missing SASS with the reason.
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "compiler/sass_dump.h"
#include "compiler/sass_summary.h"
#include "support/temp_dir.h"

using namespace kagent;

namespace {

// Shaped as `cuobjdump -sass -res-usage` prints it (encodings shortened).
const char* kSass = R"sass(
Fatbin elf code:
================
arch = sm_90a
 Resource usage:
 Function _Z4loopPKfPfi:
  REG:40 STACK:256 SHARED:0 LOCAL:0 CONSTANT[0]:552 TEXTURE:0 SURFACE:0 SAMPLER:0
 Function _Z2wmPK6__halfS1_Pf:
  REG:22 STACK:0 SHARED:2048 LOCAL:0 CONSTANT[0]:552 TEXTURE:0 SURFACE:0 SAMPLER:0

	code for sm_90a
		Function : _Z4loopPKfPfi
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
                                                                            /* 0x000fe20000000800 */
        /*0010*/                   STL [R1], RZ ;                           /* 0x000000ff01007387 */
        /*0020*/                   LDG.E.128 R8, desc[UR4][R2.64] ;         /* 0x0000000402087981 */
        /*0030*/                   LDG.E.U8 R6, desc[UR4][R2.64+0x10] ;     /* 0x0000000402067981 */
        /*0040*/                   LDL R4, [R1+0x8] ;                       /* 0x0000080001047983 */
        /*0050*/                   FFMA R4, R8, R9, R4 ;                    /* 0x0000000908047223 */
        /*0060*/                   FFMA R4, R10, R11, R4 ;                  /* 0x0000000b0a047223 */
        /*0070*/                   FMUL R5, R4, 0.5 ;                       /* 0x3f00000004057820 */
        /*0080*/                   STL [R1+0x8], R5 ;                       /* 0x0000080501007387 */
        /*0090*/               @P0 BRA 0x40 ;                               /* 0xfffffffc00fc0947 */
        /*00a0*/                   DADD R12, R12, R14 ;                     /* 0x0000000e0c0c7229 */
        /*00b0*/                   STG.E desc[UR4][R6.64], R5 ;             /* 0x0000000506007986 */
        /*00c0*/                   EXIT ;                                   /* 0x000000000000794d */
        /*00d0*/                   BRA 0xd0;                                /* 0xfffffffc00fc7947 */
        /*00e0*/                   NOP;                                     /* 0x0000000000007918 */
		......................

		Function : _Z2wmPK6__halfS1_Pf
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDG.E R4, desc[UR4][R8.64] ;             /* 0x0000000408047981 */
        /*0010*/                   STS.128 [R3], R8 ;                       /* 0x0000000803007388 */
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;            /* 0x0000000000007b1d */
        /*0030*/                   LDSM.16.M88.4 R12, [R3] ;                /* 0x000000000303783b */
        /*0040*/                   HMMA.16816.F32 R16, R4.reuse, R12, RZ ;  /* 0x0000000c0410723c */
        /*0050*/                   HMMA.16816.F32 R12, R4, R14, RZ ;        /* 0x0000000e040c723c */
        /*0060*/                   HGMMA.64x128x16.F32 R24, gdesc[UR4], RZ, !UPT ; /* 0x00e00000181879f0 */
        /*0070*/                   STG.E.64 desc[UR4][R4.64], R16 ;         /* 0x0000001004007986 */
        /*0080*/                   EXIT ;                                   /* 0x000000000000794d */
        /*0090*/                   BRA 0x90;                                /* 0xfffffffc00fc7947 */
		......................
)sass";

}  // namespace

TEST_CASE("SASS summary: widths, arithmetic, loops, local memory in loops, resources") {
  const auto ks = summarize_sass(kSass);
  REQUIRE(ks.size() == 2);
  const SassKernel& k = ks[0];
  CHECK(k.mangled == "_Z4loopPKfPfi");
  CHECK(k.kernel == "loop(float const*, float*, int)");
  CHECK(k.registers == 40);
  CHECK(k.stack_bytes == 256);
  CHECK(k.instructions == 14);  // the NOP left out
  CHECK(k.global_loads == std::map<std::string, int>{{"128", 1}, {"8", 1}});
  CHECK(k.global_stores == std::map<std::string, int>{{"32", 1}});
  CHECK(k.ffma == 2);
  CHECK(k.fmul == 1);
  CHECK(k.fp64 == 1);
  CHECK(k.local_loads == 1);
  CHECK(k.local_stores == 2);
  CHECK(k.local_in_loops == 2);  // the STL before the loop is not in it
  CHECK(k.loops == 1);
  CHECK(k.branches == 1);        // the closing "BRA <itself>" is not a branch
  CHECK(k.tensor.empty());
  CHECK(k.vector_global_accesses() == 1);
  CHECK(k.scalar_global_accesses() == 2);

  const SassKernel& w = ks[1];
  CHECK(w.shared_bytes == 2048);
  CHECK(w.shared_stores == std::map<std::string, int>{{"128", 1}});
  CHECK(w.ldmatrix == 1);
  CHECK(w.barriers == 1);
  CHECK(w.tensor == std::map<std::string, int>{{"HMMA.16816.F32", 2}, {"HGMMA.64x128x16.F32", 1}});
  CHECK(w.tensor_instructions() == 3);
  CHECK(w.branches == 0);
  CHECK(w.loops == 0);
}

TEST_CASE("SASS summary of text with no function is empty") {
  CHECK(summarize_sass("").empty());
  CHECK(summarize_sass("cuobjdump info    : File 'x.o' does not contain device code\n").empty());
}

TEST_CASE("disassemble: a file that is not an object, a tool that cannot start -> missing with the reason") {
  testing::TempDir tmp("kagent-sass");
  const auto junk = tmp.path() / "junk.o";
  std::ofstream(junk) << "not an object";
  const auto gz = tmp.path() / "out.sass.gz";
  SassInfo s = disassemble(junk, gz, resolve_cuobjdump(""), "sm_90a", std::chrono::seconds(60));
  CHECK_FALSE(s.available);
  CHECK(s.arch == "sm_90a");
  CHECK(s.missing_reason.find("failed") != std::string::npos);
  CHECK(s.kernels.empty());
  CHECK_FALSE(std::filesystem::exists(gz));

  s = disassemble(junk, gz, (tmp.path() / "no-such-cuobjdump").string(), "sm_90a", std::chrono::seconds(60));
  CHECK_FALSE(s.available);
  CHECK(s.missing_reason.find("no-such-cuobjdump") != std::string::npos);
}
