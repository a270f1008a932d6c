"""The functions the C++ worker calls, by the names it uses (tools/worker/python/python_functions.h
lists the same names; a test fails when the two lists differ)."""

import faulthandler
import signal

from kagent_worker import device, draw_ahead, guards, hygiene, module_state, precision, problem, shapes, source_scan

# SIGUSR1 writes every Python thread's stack to the worker's log (its stderr): what a stuck worker
# was doing, which the chaos suite asks for before it kills a repetition that ran past its limit.
faulthandler.register(signal.SIGUSR1, all_threads=True)

FUNCTIONS = {
    "preload": problem.preload,
    "device_info": device.device_info,
    "open_problem": problem.open_problem,
    "derive_spec": problem.derive_spec,
    "warm_up": problem.warm_up,
    "load_kernelbench_candidate": problem.load_kernelbench_candidate,
    "compiled_model": problem.compiled_model,
    "extra_inputs": shapes.extra_inputs,
    "reference_fp64": precision.reference_fp64,
    "precision_inputs": precision.precision_inputs,
    "guard_snapshot": guards.guard_snapshot,
    "guard_tampering": guards.guard_tampering,
    "put_back_autotuning": guards.put_back_autotuning,
    "python_threads": guards.python_threads,
    "new_python_threads": guards.new_python_threads,
    "scan_kernelbench_source": source_scan.scan_kernelbench_source,
    "capture_worker_state": hygiene.capture,
    "restore_worker_state": hygiene.restore,
    "module_state": module_state.plain_tensor_state,
    "module_state_changed": module_state.changed_state,
    "restore_module_state": module_state.restore_state,
    "draw_ahead_serve": draw_ahead.serve,
}
