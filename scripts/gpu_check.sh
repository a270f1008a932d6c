#!/usr/bin/env bash
# The whole GPU check, one command on the GPU machine, in named suites:
#   bash scripts/gpu_check.sh SUITE...        (no suite: tests examples)
# Every call builds kagent first (build-gpu, against the machine's torch; incremental when the
# machine is still warm), then runs the suites in the order given, each under its own time
# limit, with its log in $OUT/<suite>.log and its summary line(s) printed here. A device call
# lasts at most 10 minutes: pick suites that fit (the rough costs on a 16-core H200 are below).
#
#   tests      ctest: the CPU suites in parallel, then every GPU suite alone (~6 min)
#   cpu        the CPU suites only (~2 min)
#   verdicts   GPU verdict suite: every tests/gpu/kernels candidate gets its expected verdict (~6 min)
#   guards     the reward-hack guard suite: every hack of tests/gpu/hacks caught (KernelBench
#              problems at official sizes among them), every correct kernel clean (~6 min: torch
#              builds each KernelBench-format entry's extension in the worker, ~45 s apiece)
#   sandbox    the sandbox suite: the kit, then every act at every moment (import, __init__, first
#              call, thread, child), twice in one worker and by 4 workers at once (~4 min);
#              SANDBOX_SUITE_ARGS passes doctest's arguments (-tc='*every act*': the acts alone)
#   sandbox-official  the acts once each on KernelBench's level1/26_GELU_ at its official size (~5 min)
#   sandbox-mechanisms  which process limits CUDA tolerates here (pids cgroup, PID and user
#              namespaces), and `kagent eval`'s sandbox section (~1 min)
#   timer      timer, profiler and KAGENT_GPU_WAIT GPU tests, the solve replay test (~1 min)
#   timer-only the timer's GPU tests alone, the launch hold among them (~20 s)
#   timing-probe  launch vs gpu timing samples of a host-bound reference, CPU idle and busy, in
#              two processes (bench/timing/sample_probe.py; no build; ~30 s)
#   placement-probe  a microsecond kernel timed on one input again and again against on new inputs,
#              in three processes, then at another shape (bench/timing/placement_probe.py; ~30 s)
#   rounds-probe  which estimate of a microsecond speedup repeats between evaluations (processes):
#              one round, the rounds' median, their geometric mean; 5 rounds, then 10
#              (bench/timing/rounds_probe.py; ~2 min; last output in bench/timing/RESULTS.md)
#   draw-probe where a worker's prefetch goes on the leaderboard's ten largest trial draws: the CPU's
#              generator, the copy into the kept mapping three ways, cudaHostRegister, the copies to
#              the GPU pinned and pageable (bench/realworld/draw_probe.py; needs .carry/realworld; ~2 min)
#   ncu        the profiler against Nsight Compute on the same kernels, and the profiler's cost (~3 min)
#   profiler   the profiler's GPU tests alone (activity, attribution, range profiler; ~10 s)
#   range-cost what the range profiler's steps cost per profile by metric set, launches and range mode (~20 s)
#   profiler-cost  the profiler's cost alone, with more pairs (PROFILER_COST_REPEATS, default 12, in
#              long-lived workers; PROFILER_COST_TWO_WORKERS, default the same, in two workers side by side;
#              PROFILER_COST_FRESH, default 0, fresh ones; PROFILER_COST_EXAMPLES, names, default all) (~1.5 min)
#   profiler-cost-real  the same on six real answers of .carry/realworld (PROFILER_COST_ANSWERS, stems;
#              8 pairs in one worker): the profile's cost and the warm evaluation on real problems (~5 min)
#   profiler-cost-fixed  the same with the counters' image always sized for 256 launches, as before
#              it was sized to the traced call (KAGENT_PROFILER_SIZE_RANGES=0; 6 pairs by default)
#   roofline   FLOPs, DRAM bytes, intensity and roofline position against Nsight Compute on the
#              examples and two KernelBench problems (scripts/roofline_check.sh; ~5 min)
#   examples   `kagent eval` of an example and the README's `kagent solve` (~1 min)
#   equivalence  the 149 real answers compiled from a cold cache (compile_answers, every core) and
#              compared with bench/compile/equivalence_before.jsonl (~2 min)
#   bench      bench/eval (extra arguments after `--`) (more than 6.5 min on an H200 in the tenth
#              session: run it alone, `--deadline 590`, or give it fewer examples after `--`)
#   kbformat   KernelBench-format answers (load_inline) through kagent and through KernelBench's
#              own eval_kernel_against_ref on the same files (bench/eval/bench_kernelbench_format.py;
#              needs .carry/kernelbench) (~5 min)
#   realworld  real model answers (kb_leaderboard), bench/realworld/realworld_bench.py, in three calls
#              on one warm machine (its state in /tmp/kagent-realworld): `realworld` the warm-up, cold
#              compile times and kagent per answer on 30 of them (~7 min with the build);
#              `realworld-collect` the warm-up, then kagent collect over all 149 (~4 min;
#              RW_WORKERS=N sets its workers, RW_COMPILE_JOBS=N its compiles at once per GPU,
#              default collect's, RW_ORDER=O its --order); `realworld-collect-cold` the same without the warm-up (the
#              precompiled headers built inside, as on a machine's first run); `realworld-kb` KernelBench's
#              harness on the same 30, then the per-answer table (~8.5 min). Needs .carry/kernelbench
#              and .carry/realworld. `realworld-compile`: the warm-up and the cold compiles alone (~3 min);
#              `realworld-kagent`: the warm-up and kagent per answer, without the compile phase (~5 min)
#   level3     KernelBench level 3, a reference-wrapping candidate for each of the 50 (~7 min;
#              those not started within LEVEL3_BUDGET s, default 360, are listed as skipped)
#   level3-native  bench/level3/mlp.cu on the MLP problems (~2 min)
#   report-fixture  a real run recorded for the report's tests, into $OUT/gelu_replay_<gpu> (~1 min)
#   sweep      the 50 level-1/2 problems with the largest footprint, peak memory per problem
#              (bench/memory; ~10 min); sweep1, sweep2: its two halves
#   collect    `kagent baselines` then `kagent collect` over 40 problems with a replay model
#              (bench/collect/gpu_collect.sh; ~7 min)
#   collect2   issue 16 on a 2-GPU machine: baselines, then collect --gpus 0,1, --gpus 0 and --gpus 1
#              over the same 40 problems (bench/collect/gpu_collect_2gpu.sh; ~5 min)
#   refwrap    reference-wrapping answers on 3-D convs and SDPA, whose library kernels were once
#              taken for the answer's own: each rejected / no_kernel (~2 min)
#   baselines  two evaluations at once (shared-GPU warning, nothing cached), a doctored
#              cached baseline caught and replaced (~1 min)
#   construction  answers that draw their weights on the CPU judged correct (KernelBench's
#              construction), and the construction before shown to fail them (~1 min)
#   evalcli    `kagent eval` once for each exit status that needs a GPU, both policies (~2 min)
#   warm       where a warm evaluation's time goes on the shipped examples: the second turn of a
#              two-turn `kagent solve` in one worker (scripts/warm_eval_phases.sh; ~3 min on an H100)
#   warm-gelu  the same on elementwise_gelu alone (~40 s)
#   fidelity-start / fidelity-kagent / fidelity-finish  bench/fidelity/run.sh's phases: KernelBench's
#              harness over the 149 real answers in the background (needs .carry/kernelbench and
#              .carry/realworld), kagent collect over the kits then the answers (at most
#              FIDELITY_KAGENT_S=420 s; a cut collection is resumed by the next call; measured on an
#              H100: ~9 min for the 149 alone), the report (~1 min / ~7 min / until the harness is
#              done); fidelity: all three in one call. The harness is the slow half: on an H100 it
#              judged 130 of its 160 in 1223 s (8 at once, beside kagent's collection), and a
#              machine goes back after 30 minutes held: start it in the machine's first call
#   fidelity-recheck  second looks at open disagreements (bench/fidelity/recheck.sh): KernelBench's
#              harness again on RECHECK_KB, compute-sanitizer's memcheck on RECHECK_MEMCHECK (~3 min)
#   serve-adapters  `kagent serve` with real evaluation, 8 episodes at once through the TRL and
#              the verl adapters against one alone, on 8 KernelBench problems; target under 2x
#              (scripts/serve_adapters_gpu.sh; ~5 min)
#   serve-cluster  issue 48's check on the 2-GPU kind: one `kagent serve --queue` node, then two (a
#              GPU and half the host's cores each, as two machines) on one Redis, over 100 leaderboard
#              answers after one untimed answer per node: throughput ratio, verdicts, where each
#              phase's wall went (scripts/serve_cluster_gpu.sh; needs .carry's realworld, hiredis and
#              redis; ~400 s on a cold machine)
#   serve-roundtrip  issue 49's round trip with real evaluation: 30 leaderboard answers collected,
#              rollout, each prompt row through every adapter against `kagent serve`; each reward
#              against rollout's for the same turn (scripts/serve_roundtrip_gpu.sh; needs
#              .carry/realworld; ~4 min warm), and issue 46's repeatability (5 evaluations each)
#   hygiene    one candidate per kind of state it can leave in a worker, each named in its
#              result and cleaned, the next evaluation in the same worker correct (~1 min)
#   shared-gpu 4 `kagent eval` processes at once over the 10 largest level-1 problems with
#              honest kernels: no out-of-memory, every wait for memory said (bench/memory/
#              shared_gpu.py; ~3 min on an 80 GB H100, less with more memory)
#   chaos      (CHAOS_REPS=N repetitions, default 3) two `kagent collect` processes x 2 workers on one GPU interleaving hacks,
#              sandbox attempts, CUDA graphs, faults and honest answers, 3 times; honest
#              verdicts as alone (tests/gpu/chaos/chaos.py; ~4 min)
#   isolation  hygiene, shared-gpu and chaos (the three above, ~8 min with the build)
#   rl-throughput  issue 46: kagent collect over kb_leaderboard then cuda_l1 with the defaults: answers
#              a minute (targets 100 and 60), the GPU's kernel-busy time beside the wall, phases, lock
#              waits, loads over 5 s, verdicts against the one-at-a-time run (bench/realworld/
#              verdicts_one_at_a_time_SET.jsonl); rl-throughput-single runs one worker per GPU and
#              writes those verdicts (RL_REFERENCE_DIR=<that run's OUT> compares against them in
#              the same call; RL_SETS, RL_TOTAL_S per set, default 280; ~9 min with both on a
#              warm machine; one at a time, cuda_l1's slow answers take longer: RL_SETS=cuda_l1
#              RL_TOTAL_S=520 in a call of its own). RL_BASELINES_FIRST=1: `kagent baselines` fills
#              the cache first, timed apart, and the collection finds every baseline there (a
#              trainer's steady state; the compile cache stays cold)
#   rl-ab      a change to the collection's rate, side by side: RL_AB_PAIRS (default 2) pairs of
#              collections over one set (RL_SETS' first, default kb_leaderboard), A with RL_COLLECT_ARG,
#              B with RL_AB_ARG added (split at spaces, e.g. "--timing-max-time=0.5") and RL_AB_ENV's
#              VAR=value words in its environment (e.g. "KAGENT_GPU_WAIT=block"), in the order
#              A B A B, each with a cold compile cache, one warm-up for all; the last lines give each
#              pair's B/A and their geometric mean, whether every run's verdicts matched the
#              one-at-a-time run's, and each run's compilers' CPU seconds (the host's speed), naming
#              a pair whose two differ by over 10%. The host's speed moved by 29% within one call
#              (bench/realworld/RESULTS.md, thirty-sixth session): a change of a few percent needs
#              more pairs than one call holds (~8 min for 2 pairs on a warm machine)
#   stall      issue 46: 20 correct leaderboard answers collected alone, then beside one whose first
#              call spins 30 s on the host, alternated 3 times (STALL_ARGS=--pairs=N); the medians'
#              evaluation time within 1.2x, verdicts equal (tests/gpu/stall/stall.py, STALL_ARGS
#              passed on; needs .carry/realworld; ~4 min warm);
#              KAGENT_GPU_IDLE_RELEASE_MS=0 for the run without the idle release (run it both ways)
#
# What the machine lacks travels in .carry (scripts/prepare_carry.sh, run beforehand): OpenSSL
# headers, the KernelBench problems, einops. Logs go to $OUT (default ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
PY=${KAGENT_PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
export PATH=$(dirname "$PY"):$PATH
export KAGENT_CACHE_DIR=${KAGENT_CACHE_DIR:-/tmp/kagent-cache}
[ -d .carry/kernelbench-problems ] && export KAGENT_KERNELBENCH_DIR=$PWD/.carry/kernelbench-problems
if ! "$PY" -c 'import einops' 2>/dev/null && [ -d .carry/python ]; then
  export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
fi
B=build-gpu
T0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - T0 )) s"; }
failed=0

# run_suite NAME LIMIT_S SUMMARY_REGEX COMMAND...: the command's output goes to $OUT/NAME.log.
run_suite() {
  local name=$1 limit=$2 summary=$3
  shift 3
  local start=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "suite $name: rc=$rc in $(( $(date +%s) - start )) s (at $(elapsed))"
  [ "$rc" -eq 124 ] && echo "  ran past its ${limit} s limit"
  grep -E "$summary" "$OUT/$name.log" | head -40 | cut -c1-400
  [ "$rc" -eq 0 ] || failed=1
}

# rl_collect NAME SUMMARY_REGEX TOTAL_S SET_DIR STATE OUT PHASES WORKERS [ARG...]: one collection of
# a real set by bench/realworld/realworld_bench.py under run_suite (rl-throughput, rl-ab), with
# RL_RUN_ENV's VAR=value words (split at spaces) in its environment.
rl_collect() {
  local name=$1 summary=$2 total=$3 set_dir=$4 state=$5 out=$6 phases=$7 workers=$8
  shift 8
  local extra=(); for e in ${RL_RUN_ENV:-}; do extra+=("$e"); done
  run_suite "$name" "$total" "$summary" env "${extra[@]}" KAGENT_REALWORLD_DIR="$set_dir" KAGENT_REALWORLD_STATE="$state" \
    "$PY" bench/realworld/realworld_bench.py --kagent $B/kagent --compile-answers $B/bench/compile/compile_answers \
    --out "$out" --python "$PY" --phases "$phases" --total-s $(( total - 20 )) --budget collect=$(( total - 60 )) \
    --workers-per-gpu "$workers" "$@"
}

{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
  # What an earlier call on this warm machine left (2026-11-30: 64.9 GB in use on GPU 0 after a
  # deadline's kill, nothing named): every process on a GPU and every kagent or redis still alive.
  apps=$(nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader 2>/dev/null)
  # By program name (not by command line, where a compiler's -I/.../kagent/... would match).
  kagent_processes() { ps -eo pid=,etimes=,stat=,comm=,args= | awk '$4 ~ /^kagent/ || $4 == "redis-server"' | cut -c1-160; }
  left=$(kagent_processes)
  [ -n "$apps$left" ] && printf 'left by an earlier call:\n%s\n%s\n' "$apps" "$left"
  # Nothing is timed beside them: wait (60 s at most) until no process of an earlier call runs on
  # the GPU and no kagent of it is alive (zombies are the container's PID 1's to reap: they hold
  # nothing), then say how long that took (2026-11-30: an exiting kagent-monitor and 1.5 GB in use
  # at the start of a call that came right after a killed collection).
  if [ -n "$apps$left" ]; then
    waited=0
    while [ $waited -lt 60 ]; do
      busy=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null)
      alive=$(kagent_processes | awk '$3 !~ /^Z/')
      [ -z "$busy$alive" ] && break
      sleep 2; waited=$((waited + 2))
    done
    echo "earlier call's processes: $([ -z "$busy$alive" ] && echo "gone after ${waited} s" || echo "still there after ${waited} s: timings beside them are suspect")"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader
  fi
  "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))'
  nvcc --version | tail -1
  # Cores, and how many are hardware threads of one core: compiles scale with the physical ones.
  echo "cores $(nproc): $(lscpu 2>/dev/null | grep -E '^(Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|Model name)' | sed 's/  */ /g' | paste -sd ';' -)"
} 2>&1 | tee "$OUT/machine.txt"

# KernelBench's harness is the slow half of the fidelity benchmark and needs no kagent: started
# before the build, it gains the build's minutes on a machine held at most 30 minutes.
if [ "${1:-}" = fidelity-start ]; then
  shift
  echo "== fidelity-start (before the build)"
  run_suite fidelity-start 120 "^fidelity:" env OUT="$OUT" bash bench/fidelity/run.sh $B/kagent start
  [ $# -eq 0 ] && exit $failed
fi

echo "== build"
extra=()
# Without libssl-dev there, use the carried headers and the runtime libcrypto.so.3.
if [ ! -f /usr/include/openssl/sha.h ] && [ -d .carry/include/openssl ]; then
  crypto=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so* 2>/dev/null | head -1)
  extra+=(-DOPENSSL_INCLUDE_DIR=$PWD/.carry/include -DOPENSSL_CRYPTO_LIBRARY=$crypto -DOPENSSL_SSL_LIBRARY=$crypto)
fi
# cpp-httplib (kagent serve, the LLM server tests) comes from .carry/httplib where the machine lacks it.
[ -d .carry/httplib/lib ] && export LD_LIBRARY_PATH=$PWD/.carry/httplib/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
suites=()
for s in "$@"; do
  if [ "$s" = isolation ]; then suites+=(hygiene shared-gpu chaos); else suites+=("$s"); fi
done
[ ${#suites[@]} -eq 0 ] && suites=(tests examples)
bench_args=()
for i in "${!suites[@]}"; do
  if [ "${suites[$i]}" = -- ]; then bench_args=("${suites[@]:$((i + 1))}"); suites=("${suites[@]:0:$i}"); break; fi
done
# Only what the suites need is built: a fresh machine builds everything in minutes, which a
# 10-minute call cannot spare twice.
targets=(kagent kagent-worker)
for suite in "${suites[@]}"; do
  case "$suite" in
  tests | cpu) targets=(all) ; break ;;
  verdicts) targets+=(kagent_gpu_suite_tests) ;;
  guards) targets+=(kagent_guard_suite_tests) ;;
  sandbox | sandbox-official) targets+=(kagent_sandbox_suite_tests) ;;
  timer) targets+=(kagent_timer_gpu_tests kagent_profiler_gpu_tests kagent_solve_gpu_tests kagent_gpu_wait_gpu_tests) ;;
  timer-only) targets+=(kagent_timer_gpu_tests) ;;
  profiler) targets+=(kagent_profiler_gpu_tests) ;;
  baselines) targets+=(kagent_baselines_gpu_tests) ;;
  construction) targets+=(kagent_construction_gpu_tests) ;;
  evalcli) targets+=(kagent_eval_cli_gpu_tests) ;;
  hygiene) targets+=(kagent_hygiene_suite_tests) ;;
  ncu) targets+=(profiler_probe profiler_cost) ;;
  range-cost) targets+=(profiler_probe) ;;
  profiler-cost | profiler-cost-fixed | profiler-cost-real) targets+=(profiler_cost) ;;
  realworld | realworld-compile | realworld-kagent | realworld-collect | realworld-collect-cold | realworld-kb | equivalence | rl-throughput* | rl-ab) targets+=(compile_answers) ;;
  esac
done
start=$(date +%s)
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PY" "${extra[@]}" > "$OUT/build.log" 2>&1 &&
  cmake --build $B -j "$(nproc)" --target "${targets[@]}" -- -k 0 >> "$OUT/build.log" 2>&1
rc=$?
echo "build (${targets[*]}) rc=$rc in $(( $(date +%s) - start )) s"
# Keep going: a target that failed to build shows up as a failed suite below.
[ $rc -ne 0 ] && grep -E "error|FAILED" "$OUT/build.log" | head -20
[ -x $B/kagent-worker ] || exit 1

CTEST_SUMMARY="tests passed|tests failed|Failed|\*\*\*|SKIPPED|Not Run|GPU suite:|Guard suite:|Sandbox suite:|profiler gpu:|range profiler:|Solve replay:"
for suite in "${suites[@]}"; do
  echo "== $suite"
  case "$suite" in
  tests)
    # CPU suites in parallel, GPU suites alone, so nothing else disturbs their timings.
    run_suite tests-cpu 300 "$CTEST_SUMMARY" ctest --test-dir $B --output-on-failure --timeout 280 -LE gpu -j 8
    run_suite tests-gpu 480 "$CTEST_SUMMARY" ctest --test-dir $B --output-on-failure --timeout 400 -L gpu -V ;;
  cpu) run_suite cpu 300 "$CTEST_SUMMARY" ctest --test-dir $B --output-on-failure --timeout 280 -LE gpu -j 8 ;;
  verdicts) run_suite verdicts 480 "GPU suite:|^FAIL" $B/tests/gpu/kagent_gpu_suite_tests ;;
  guards) run_suite guards 480 "Guard suite:|^FAIL" $B/tests/gpu/kagent_guard_suite_tests ;;
  sandbox) run_suite sandbox 420 "Sandbox suite:|Sandbox acts:|^FAIL|sandbox section:" $B/tests/gpu/kagent_sandbox_suite_tests ${SANDBOX_SUITE_ARGS:-} ;;
  sandbox-official)
    # The acts once each on KernelBench's level-1 GELU at its official size (4096 x 393216).
    kb=${KAGENT_KERNELBENCH_DIR:-}; [ -z "$kb" ] && { [ -d .carry/kernelbench-problems ] && kb=.carry/kernelbench-problems || kb=../shared/kernelbench; }
    run_suite sandbox-official 420 "Sandbox acts:|^FAIL|^sandbox acts on" env KAGENT_SANDBOX_ACTS_ONCE=1 \
      KAGENT_SANDBOX_ACTS_PROBLEM="$(realpath "$kb/level1/26_GELU_.py")" $B/tests/gpu/kagent_sandbox_suite_tests -tc='*every*act*' ;;
  sandbox-mechanisms) run_suite sandbox-mechanisms 300 "^mechanism|^kernel|mount:|^exit|^correct|^runtime|\"mechanism\"|why" \
    env BUILD=$B PY="$PY" bash scripts/sandbox_mechanisms.sh ;;
  timer)
    run_suite timer 90 "test cases|FAILED" $B/tests/gpu/kagent_timer_gpu_tests
    run_suite gpu-wait 60 "test cases|FAILED" $B/tests/gpu/kagent_gpu_wait_gpu_tests
    run_suite profiler-gpu 90 "profiler gpu:|range profiler:|test cases" $B/tests/gpu/kagent_profiler_gpu_tests
    run_suite solve-gpu 120 "Solve replay:|test cases" $B/tests/gpu/kagent_solve_gpu_tests ;;
  timing-probe) run_suite timing-probe 90 "^sample_probe:" bash -c "for i in 1 2; do \"$PY\" bench/timing/sample_probe.py; done" ;;
  placement-probe) run_suite placement-probe 120 "^placement_probe:" bash -c \
      "for i in 1 2 3; do \"$PY\" bench/timing/placement_probe.py; done; \"$PY\" bench/timing/placement_probe.py --rows 128 --cols 4096" ;;
  rounds-probe) run_suite rounds-probe 150 "^rounds_probe:" bash -c \
      "\"$PY\" bench/timing/rounds_probe.py --rounds 5; \"$PY\" bench/timing/rounds_probe.py --rounds 10" ;;
  draw-probe) run_suite draw-probe 300 "^draw_probe:" "$PY" bench/realworld/draw_probe.py \
      --problems "${RL_SETS_DIR:-.carry/realworld}/kb_leaderboard/problems" ;;
  timer-only) run_suite timer 90 "test cases|FAILED|^issue:|^launch latency:" $B/tests/gpu/kagent_timer_gpu_tests ;;
  profiler) run_suite profiler-gpu 90 "profiler gpu:|range profiler:|test cases" $B/tests/gpu/kagent_profiler_gpu_tests ;;
  # What the range profiler's steps cost per profile by metric set, launches and range mode.
  range-cost) run_suite range-cost 120 "range-cost" $B/profiler_probe --range-cost ;;
  ncu)
    run_suite ncu 120 "^probe|within|differ|kernels" env OUT="$OUT" bash scripts/ncu_check.sh $B
    run_suite profiler-cost 330 "." $B/profiler_cost --repeats 4 --fresh 1 --json "$OUT/profiler_cost.json" ;;
  profiler-cost)
    run_suite profiler-cost 330 "." $B/profiler_cost --repeats "${PROFILER_COST_REPEATS:-12}" \
      --two-workers "${PROFILER_COST_TWO_WORKERS:-${PROFILER_COST_REPEATS:-12}}" \
      --fresh "${PROFILER_COST_FRESH:-0}" ${PROFILER_COST_EXAMPLES:+--examples "$PROFILER_COST_EXAMPLES"} \
      --json "$OUT/profiler_cost.json" ;;
  profiler-cost-real)
    # Real model answers (KernelBench format) on their problems at the official sizes, two per
    # level; l3_p18_gpt4o (67 launches) and l3_p10_deepseekcoder (619) get counters over the whole call.
    run_suite profiler-cost-real 420 "." $B/profiler_cost --realworld .carry/realworld/kb_leaderboard \
      --answers "${PROFILER_COST_ANSWERS:-l1_p12_gpt4o,l1_p90_gpto1,l2_p100_deepseekcoder,l2_p47_deepseekcoder,l3_p18_gpt4o,l3_p10_deepseekcoder}" \
      --repeats "${PROFILER_COST_REPEATS:-8}" --two-workers 0 --fresh 0 --no-compile-baseline --json "$OUT/profiler_cost_real.json" ;;
  profiler-cost-fixed)
    KAGENT_PROFILER_SIZE_RANGES=0 run_suite profiler-cost-fixed 330 "." $B/profiler_cost \
      --repeats "${PROFILER_COST_REPEATS:-6}" --fresh 0 --json "$OUT/profiler_cost_fixed.json" ;;
  examples)
    run_suite example-eval 120 "verdict|speedup|gpu " $B/kagent eval examples/gemm_bias_relu.py examples/gemm_bias_relu.cu
    runs=$(mktemp -d)
    run_suite example-solve 180 "turn|best|correct" $B/kagent solve examples/elementwise_gelu.py \
      --llm replay:examples/elementwise_gelu.replay.jsonl --runs-dir "$runs"
    rm -rf "$runs" ;;
  bench)
    run_suite bench 560 "speedup|x faster|kagent|KernelBench" "$PY" bench/eval/bench_eval.py --kagent $B/kagent \
      --out "$OUT/bench_eval.json" "${bench_args[@]}" ;;
  kbformat)
    run_suite kbformat 540 "first sight|speedup|x faster|fell back|summary|KernelBench-format" \
      env KAGENT_BENCH_COMMAND="bash scripts/gpu_check.sh kbformat" \
      "$PY" bench/eval/bench_kernelbench_format.py --kagent $B/kagent --out "$OUT" "${bench_args[@]}" ;;
  realworld | realworld-compile | realworld-kagent | realworld-collect | realworld-collect-cold | realworld-kb)
    rw_extra=()
    case $suite in
    realworld) rw_phases=warmup,compile,kagent rw_total=380 rw_fresh=--fresh ;;
    realworld-compile) rw_phases=warmup,compile rw_total=200 rw_fresh=--fresh ;;
    # Every one of the 30 answers within the budget (the kagent phase's 150 s cut the last one).
    realworld-kagent) rw_phases=warmup,kagent rw_total=320 rw_fresh=--fresh rw_extra=(--budget kagent=250) ;;
    # The per-machine precompiled headers first (warmup, ~20 s), as on any machine kagent has
    # compiled on before; realworld-collect-cold builds them inside the collection, as a machine's
    # very first run does.
    realworld-collect) rw_phases=warmup,collect rw_total=360 rw_fresh= ;;
    realworld-collect-cold) rw_phases=collect rw_total=330 rw_fresh= ;;
    realworld-kb) rw_phases=kernelbench rw_total=520 rw_fresh= ;;
    esac
    run_suite $suite $((rw_total + 30)) "^machine|^warm-up|^kagent per answer|^compile of|^compile split|^per answer|^collect rc|^cpu:|^evaluation phases|^timing loops|^timing threads|^baselines:|^baselines' eager|^timings:|^  gpu|^  worker|^  the default gpu|^verdicts of|^against" \
      env KAGENT_BENCH_COMMAND="bash scripts/gpu_check.sh realworld realworld-collect realworld-kb" \
      "$PY" bench/realworld/realworld_bench.py --kagent $B/kagent --compile-answers $B/bench/compile/compile_answers \
      --out "$OUT" --python "$PY" --phases $rw_phases --total-s $rw_total $rw_fresh \
      --workers-per-gpu "${RW_WORKERS:-0}" --collect-compile-jobs "${RW_COMPILE_JOBS:-0}" --collect-order "${RW_ORDER:-}" \
      "${rw_extra[@]}" ;;
  rl-throughput | rl-throughput-single)
    # Issue 46's throughput over both real sets, one after the other on the same GPU: kagent collect
    # with its defaults (rl-throughput; its verdicts against the one-at-a-time run's, committed as
    # bench/realworld/verdicts_one_at_a_time_SET.jsonl) or one worker per GPU (rl-throughput-single,
    # which makes those files: take them from $OUT/SET/realworld/). RL_SETS="kb_leaderboard cuda_l1"
    # (commas too: a set named "a,b" once took a call, and its cache path broke every nvcc build).
    # RL_COLLECT_ARG=--no-profile: more flags for the collection, split at spaces (what an RL
    # step's rewards need; "--timing-min-time=0.1 --timing-warmup=0.05 --timing-min-samples=20": the
    # floors before the thirty-fourth session).
    rl_workers=${RW_WORKERS:-0}; [ "$suite" = rl-throughput-single ] && rl_workers=1
    rl_collect_args=()
    for rl_arg in ${RL_COLLECT_ARG:-}; do rl_collect_args+=(--collect-arg="$rl_arg"); done
    rl_sets=${RL_SETS:-kb_leaderboard cuda_l1}
    for rl_set in ${rl_sets//,/ }; do
      [ -d "${RL_SETS_DIR:-.carry/realworld}/$rl_set" ] || { echo "rl-throughput: no set $rl_set under ${RL_SETS_DIR:-.carry/realworld}"; continue; }
      # RL_REFERENCE_DIR: an rl-throughput-single run's $OUT of the same call, whose verdicts
      # stand in for the committed ones (one call runs both, the tree unchanged in between).
      rl_ref=bench/realworld/verdicts_one_at_a_time_$rl_set.jsonl rl_refarg=()
      [ -n "${RL_REFERENCE_DIR:-}" ] && rl_ref=$RL_REFERENCE_DIR/$rl_set/realworld/verdicts_$rl_set.jsonl
      [ "$suite" = rl-throughput ] && [ -f "$rl_ref" ] && rl_refarg=(--reference-verdicts "$rl_ref")
      mkdir -p "$OUT/$rl_set"
      rl_collect "$suite-$rl_set" "^machine|^warm-up|^baselines first|^collect.s extra|^collect rc|^cpu:|^gpu:|^evaluation phases|^timings:|^  gpu|^  worker|^  the default gpu|^verdicts against|^loads over" \
        "${RL_TOTAL_S:-280}" "${RL_SETS_DIR:-.carry/realworld}/$rl_set" "/tmp/kagent-rl-$rl_set" "$OUT/$rl_set" \
        warmup,collect "$rl_workers" "${rl_refarg[@]}" ${RL_BASELINES_FIRST:+--baselines-first} "${rl_collect_args[@]}"
    done ;;
  rl-ab)
    ab_set=${RL_SETS:-kb_leaderboard}; ab_set=${ab_set//,/ }; ab_set=${ab_set%% *}
    ab_dir=${RL_SETS_DIR:-.carry/realworld}/$ab_set
    [ -d "$ab_dir" ] || { echo "rl-ab: no set $ab_set under ${RL_SETS_DIR:-.carry/realworld}"; failed=1; continue; }
    [ -n "${RL_AB_ARG:-}${RL_AB_ENV:-}" ] || { echo "rl-ab: neither RL_AB_ARG (the B side's flags) nor RL_AB_ENV (its environment) is set"; failed=1; continue; }
    ab_ref=bench/realworld/verdicts_one_at_a_time_$ab_set.jsonl ab_refarg=()
    [ -f "$ab_ref" ] && ab_refarg=(--reference-verdicts "$ab_ref")
    ab_a=(); for a in ${RL_COLLECT_ARG:-}; do ab_a+=(--collect-arg="$a"); done
    ab_b=("${ab_a[@]}"); for a in ${RL_AB_ARG:-}; do ab_b+=(--collect-arg="$a"); done
    ab_phases=warmup,collect
    for ab_i in $(seq 1 "${RL_AB_PAIRS:-2}"); do
      for ab_side in A B; do
        if [ $ab_side = A ]; then ab_args=("${ab_a[@]}") RL_RUN_ENV=; else ab_args=("${ab_b[@]}") RL_RUN_ENV=${RL_AB_ENV:-}; fi
        # One state folder: the warm-up's headers serve every run; each collection starts from
        # them alone (realworld_bench's fresh cache), its compile and baseline caches cold.
        rl_collect "rl-ab-$ab_i$ab_side" "^collect rc|^verdicts against" "${RL_TOTAL_S:-200}" "$ab_dir" \
          "/tmp/kagent-rl-ab-$ab_set" "$OUT/ab/$ab_i$ab_side" $ab_phases "${RW_WORKERS:-0}" "${ab_refarg[@]}" "${ab_args[@]}"
        ab_phases=collect
      done
    done
    RL_RUN_ENV=
    "$PY" - "$OUT" "${RL_AB_PAIRS:-2}" "${RL_AB_ARG:-} ${RL_AB_ENV:-}" <<'PY'
import math, re, sys
from pathlib import Path
out, pairs, arg = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].strip()
def run(tag):
    text = (out / f"rl-ab-{tag}.log").read_text(errors="replace") if (out / f"rl-ab-{tag}.log").exists() else ""
    m = re.search(r"^collect rc=0: .*?: ([0-9.]+) answers per minute", text, re.M)
    same = re.search(r"^verdicts against \S+: (\d+) of (\d+) the same", text, re.M)
    # The host's speed of the moment: the compilers' CPU seconds for the same builds (the cpu: line).
    cpu = re.search(r"^cpu: .*?by program \(CPU s\): ([^;]*)", text, re.M)
    progs = dict((k, float(v)) for k, v in re.findall(r"([\w+.-]+) ([0-9.]+)", cpu.group(1))) if cpu else {}
    compilers = sum(progs.get(k, 0.0) for k in ("cc1plus", "cudafe++", "cicc")) or None
    return (float(m.group(1)) if m else None), (same is not None and same.group(1) == same.group(2)), compilers
rows = [(run(f"{i}A"), run(f"{i}B")) for i in range(1, pairs + 1)]
ratios = [b[0] / a[0] for a, b in rows if a[0] and b[0]]
geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
fmt = lambda v: "-" if v is None else f"{v:.1f}"
print(f"ab: B = A + {arg}: A {' '.join(fmt(a[0]) for a, b in rows)}; B {' '.join(fmt(b[0]) for a, b in rows)} "
      f"answers a minute; B/A by pair {' '.join(f'{r:.3f}' for r in ratios)}, geometric mean {geo:.3f}; "
      f"verdicts as one at a time in {sum(a[1] + b[1] for a, b in rows)} of {2 * pairs} runs")
# Within one call the host's speed moved by 29% (thirty-sixth session, bench/realworld/RESULTS.md):
# a pair whose builds took CPU seconds that far apart says the host's change, not B's.
hosts = [f"{fmt(a[2])}/{fmt(b[2])}" for a, b in rows]
moved = [i + 1 for i, (a, b) in enumerate(rows) if a[2] and b[2] and max(a[2], b[2]) / min(a[2], b[2]) > 1.1]
print(f"ab: the compilers' CPU s (the host's speed) by pair, A/B: {' '.join(hosts)}"
      + (f"; pair {' '.join(map(str, moved))} moved over 10%: its ratio is the host's as much as B's" if moved else ""))
PY
    ;;
  equivalence)
    # The 149 real answers built from a cold cache on every core, against the committed reference.
    eq_cache=$(mktemp -d)
    run_suite equivalence 300 "^build equivalence|^compile_answers|differs|only in" bash -c \
      "$B/bench/compile/compile_answers ${KAGENT_REALWORLD_DIR:-.carry/realworld/kb_leaderboard}/answers/*.py --cache-dir $eq_cache --jobs \$(nproc) \
         --out $OUT/equivalence_after.jsonl > $OUT/equivalence_compile.log 2>&1; echo compile_answers rc=\$?; \
       $PY bench/compile/check_build_equivalence.py bench/compile/equivalence_before.jsonl $OUT/equivalence_after.jsonl"
    rm -rf "$eq_cache" ;;
  level3) run_suite level3 480 "^verdicts|internal_error" env OUT="$OUT" LEVEL3_BUDGET=${LEVEL3_BUDGET:-360} \
      bash bench/level3/gpu_level3.sh $B/kagent kernelbench ;;
  level3-native) run_suite level3-native 200 "^\||speedup|verdict" env OUT="$OUT" \
      bash bench/level3/gpu_level3.sh $B/kagent native ;;
  report-fixture)
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oE 'H[0-9]+' | tr 'A-Z' 'a-z')
    run_suite report-fixture 200 "solve rc|recorded" env DEST="$OUT/gelu_replay_${gpu:-gpu}" BUILD=$B OUT="$OUT" \
      bash tests/report/record_run.sh ;;
  sweep | sweep1 | sweep2)
    # sweep1 and sweep2: the two halves of the list, for calls that cannot fit the whole.
    part=all; [ "$suite" != sweep ] && part=${suite#sweep}/2
    run_suite "$suite" 540 "^sweep|internal_error|out of memory|Softmax|ReLU" env OUT="$OUT" SWEEP_PART=$part \
      bash bench/memory/sweep.sh $B/kagent ;;
  collect) run_suite collect 560 "^\| [0-9]|^collection:|^check:|^expected:|^level [0-9]|whole script" env OUT="$OUT" \
      bash bench/collect/gpu_collect.sh $B/kagent ;;
  collect2) run_suite collect2 560 "^[ABC] |^  gpu|^  problems whose|^evaluations per|^speedups on|^eager re-checks|whole script" env OUT="$OUT" \
      bash bench/collect/gpu_collect_2gpu.sh $B/kagent ;;
  roofline) run_suite roofline 420 "flops|missing|failed|no own|roofline check rc" env OUT="$OUT" \
      bash scripts/roofline_check.sh $B ;;
  refwrap) run_suite refwrap 240 "^ok|^FAIL|reference wrappers" bash scripts/refwrap_check.sh $B/kagent ;;
  baselines) run_suite baselines 240 "shared GPU seen|siblings seen|doctored|test cases|FAILED" $B/tests/gpu/kagent_baselines_gpu_tests ;;
  construction) run_suite construction 240 "Construction:|old construction|^kb_|FAILED|ERROR" \
      $B/tests/gpu/kagent_construction_gpu_tests ;;
  evalcli) run_suite evalcli 300 "test cases|FAILED|ERROR" $B/tests/gpu/kagent_eval_cli_gpu_tests ;;
  warm) run_suite warm 200 "^warm " bash scripts/warm_eval_phases.sh $B/kagent ;;
  warm-gelu) run_suite warm-gelu 90 "^warm " env WARM_EXAMPLES=elementwise_gelu bash scripts/warm_eval_phases.sh $B/kagent ;;
  fidelity-start | fidelity-kagent | fidelity-finish | fidelity)
    phases=${suite#fidelity-}; [ "$suite" = fidelity ] && phases="start kagent finish"
    # kagent's collections get what is left of a 10-minute call (at most 420 s), so that a call
    # that also built ends with the records copied out; the next call resumes the rest.
    left_s=$(( 530 - ($(date +%s) - T0) )); [ $left_s -gt 420 ] && left_s=420; [ $left_s -lt 30 ] && left_s=30
    run_suite "$suite" 560 "^fidelity:|^Fidelity:|^KernelBench harness:|undiagnosed|still running" env OUT="$OUT" \
      FIDELITY_KAGENT_S=${FIDELITY_KAGENT_S:-$left_s} bash bench/fidelity/run.sh $B/kagent $phases ;;
  fidelity-recheck) run_suite fidelity-recheck 400 "^recheck:" env OUT="$OUT" bash bench/fidelity/recheck.sh ;;
  serve-adapters) run_suite serve-adapters 540 "^kagent serve on|^warm-up|^trl:|^verl:|^serve adapters:|adapters_gpu:|Error" \
      env OUT="$OUT" bash scripts/serve_adapters_gpu.sh $B/kagent ;;
  serve-cluster) run_suite serve-cluster 540 "^cluster:|serve_cluster_gpu:|Error" env OUT="$OUT" bash scripts/serve_cluster_gpu.sh $B/kagent ;;
  serve-roundtrip) run_suite serve-roundtrip 540 "^roundtrip:|serve_roundtrip_gpu:|Error" \
      env OUT="$OUT" bash scripts/serve_roundtrip_gpu.sh $B/kagent ;;
  hygiene) run_suite hygiene 180 "Hygiene suite:|^FAIL" $B/tests/gpu/kagent_hygiene_suite_tests ;;
  shared-gpu)
    kb=${KAGENT_KERNELBENCH_DIR:-../shared/kernelbench}
    run_suite shared-gpu 330 "^Shared GPU:|^FAIL|^SKIPPED" "$PY" bench/memory/shared_gpu.py --kagent $B/kagent \
      --kernelbench "$kb" --out "$OUT/shared-gpu" ;;
  chaos) run_suite chaos 400 "^Chaos:|^FAIL|^repetition|^SKIPPED|^hang:" "$PY" tests/gpu/chaos/chaos.py --kagent $B/kagent --reps "${CHAOS_REPS:-3}" \
      --out "$OUT/chaos" ;;
  stall) run_suite stall 400 "^Stall:|^stall:|^SKIPPED" "$PY" tests/gpu/stall/stall.py --kagent $B/kagent --out "$OUT/stall" ${STALL_ARGS:-} ;;
  *) echo "gpu_check: unknown suite '$suite' (see the list at the top of scripts/gpu_check.sh)" >&2; failed=1 ;;
  esac
done
echo "== done in $(elapsed), $([ $failed -eq 0 ] && echo 'every suite passed' || echo 'some suite failed')"
exit $failed
