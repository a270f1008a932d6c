#!/usr/bin/env python3
"""FLOPs, DRAM bytes, intensity and roofline position: kagent's profile against Nsight Compute.

  roofline_check.py run PROBLEM SO OP_NAME      one call of a compiled candidate (for ncu)
  roofline_check.py metrics                      the metric list for ncu --metrics
  roofline_check.py compare KAGENT_JSON NCU_CSV LABEL  per own kernel, both side by side; exit 1 when
                                                 FLOPs, bytes or intensity differ by more than
                                                 10% or the side of the ridge differs

`run` loads the problem (Model, get_inputs, get_init_inputs), the candidate's shared object
(kagent's registration: torch.ops.<namespace>.forward(inputs..., state_dict values...)), and calls
it twice, each after kagent's L2 flush (a memset of twice the L2), as kagent's profiler does, so
that ncu with --cache-control none sees the cache state kagent's counters saw. The definitions
are Nsight Compute's roofline: FLOPs = add + mul + 2 fma of the thread-level FP instruction
counters per precision; bytes = dram__bytes_read + dram__bytes_write; peaks = per-cycle peak
times the measured clock.
"""
import csv
import importlib.util
import json
import sys

FLOP = {
    "fp32": ("fadd", "fmul", "ffma"),
    "fp64": ("dadd", "dmul", "dfma"),
    "fp16": ("hadd", "hmul", "hfma"),
}
INST = "smsp__sass_thread_inst_executed_op_{}_pred_on.sum"
PEAKS = [
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained",
    "sm__cycles_elapsed.avg.per_second",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
]
# The FLOP run's metrics; DRAM bytes and duration come from a separate one-pass run.
METRICS = [INST.format(op) for ops in FLOP.values() for op in ops] + PEAKS
TOLERANCE = 0.10


def run(problem, so, op_name):
    import torch
    spec = importlib.util.spec_from_file_location("problem", problem)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(42)
    model = mod.Model(*mod.get_init_inputs()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    params = list(model.state_dict().values())
    torch.ops.load_library(so)
    namespace, name = op_name.split("::")
    op = getattr(getattr(torch.ops, namespace), name)
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    for _ in range(2):  # warm-up, then the measured call: the last launches of each kernel
        flush.zero_()
        torch.cuda.synchronize()
        op(*inputs, *params)
        torch.cuda.synchronize()


def roofline(m):
    """The roofline figures from one kernel's metric values (summed launches, peaks averaged)."""
    flops = {p: m[INST.format(a)] + m[INST.format(b)] + 2 * m[INST.format(c)] for p, (a, b, c) in FLOP.items()}
    total = sum(flops.values())
    nbytes = m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"]
    r = {"flops": total, "dram_bytes": nbytes, "intensity": total / nbytes if nbytes else 0.0,
         "achieved_gflops": total / m["gpu__time_duration.sum"] if m["gpu__time_duration.sum"] else 0.0}
    fp64 = flops["fp64"] > flops["fp32"]
    peak = 2 * m[PEAKS[1] if fp64 else PEAKS[0]] * m[PEAKS[2]] * 1e-9
    gbps = m[PEAKS[3]] * m[PEAKS[4]] * 1e-9
    if peak > 0 and gbps > 0:
        r["ridge"] = peak / gbps
        r["side"] = "memory" if r["intensity"] < r["ridge"] else "compute"
        attainable = min(peak, r["intensity"] * gbps)
        r["pct_of_attainable"] = 100 * r["achieved_gflops"] / attainable if attainable else 0.0
    return r


def ncu_launches(path):
    """mangled kernel name -> [metrics of each launch], in launch order."""
    rows = list(csv.reader(line for line in open(path) if line.startswith('"')))
    if not rows:
        return {}
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    by_id = {}
    for r in rows:
        value = r[col["Metric Value"]].replace(",", "")
        try:
            value = float(value)
        except ValueError:
            continue
        launch = by_id.setdefault(int(r[col["ID"]]), {"name": r[col["Kernel Name"]], "m": {}})
        launch["m"][r[col["Metric Name"]]] = value
    out = {}
    for i in sorted(by_id):
        out.setdefault(by_id[i]["name"], []).append(by_id[i]["m"])
    return out


def summed(launches):
    m = {}
    for launch in launches:
        for k, v in launch.items():
            m[k] = m.get(k, 0.0) + v
    for k in PEAKS:  # rates and per-cycle peaks: averaged, not summed
        m[k] = m.get(k, 0.0) / max(len(launches), 1)
    return m


def off(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def compare(kagent_json, ncu_csv, label):
    result = json.load(open(kagent_json))
    profile = result.get("profile") or {}
    launches = ncu_launches(ncu_csv)
    ok, rows = True, 0
    for k in profile.get("kernels", []):
        if not k.get("own"):
            continue
        ours = k.get("roofline")
        theirs_all = launches.get(k["mangled"])
        name = k["name"][:60]
        if ours is None or not theirs_all:
            print(f"{label}: {name}: missing ({'no kagent roofline' if ours is None else 'kernel not in the ncu output'})")
            ok = False
            continue
        # the measured call: the last `calls` launches of this kernel
        theirs = roofline(summed(theirs_all[-int(k.get("calls", 1)):]))
        rows += 1
        line = [f"{label}: {name}"]
        for key, unit in (("flops", "FLOP"), ("dram_bytes", "B"), ("intensity", "FLOP/B")):
            d = off(ours[key], theirs[key])
            bad = d > TOLERANCE and not (key == "flops" and ours[key] == theirs[key] == 0)
            ok = ok and not bad
            line.append(f"{key} {ours[key]:.4g} vs ncu {theirs[key]:.4g} {unit} ({100 * d:.1f}%{' FAIL' if bad else ''})")
        if "side" in ours and "side" in theirs:
            same = ours["side"] == theirs["side"]
            ok = ok and same
            line.append(f"side {ours['side']} vs ncu {theirs['side']}{'' if same else ' FAIL'} "
                        f"(ridge {ours['ridge']:.3g} vs {theirs['ridge']:.3g} FLOP/B; "
                        f"{ours['pct_of_attainable']:.0f}% vs {theirs['pct_of_attainable']:.0f}% of attainable)")
        else:
            line.append("side: no peaks")
        print("; ".join(line))
    if rows == 0:
        print(f"{label}: no own kernel compared")
        ok = False
    return ok


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "run":
        run(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "compare":
        sys.exit(0 if compare(*sys.argv[2:]) else 1)
    elif len(sys.argv) == 2 and sys.argv[1] == "metrics":
        print(",".join(METRICS))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
