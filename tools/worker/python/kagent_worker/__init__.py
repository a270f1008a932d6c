"""Python half of the kagent worker, run by the interpreter the worker embeds.

It does what only Python can do well: execute a KernelBench problem file, build its Model
and inputs, derive the ProblemSpec, load KernelBench-format candidates, build the
torch.compile baseline, and the guards' Python-side checks. Timing, checking and native
candidates stay in C++. The C++ side calls only the functions in `registry.FUNCTIONS`.

Modules, one job each: loading (errors, executing user files), problem (problems and
candidates), device (the GPU description), guards (fp64 truth, tampering, threads),
source_scan (static checks of a KernelBench answer), inline_calls (load_inline calls read
statically, shared with the orchestrator), inline_patch (load_inline while an answer loads),
hygiene (the process state one evaluation could leave for the next: captured, checked, put
back), module_state (tensors a model keeps as plain attributes: snapshotted, compared, put back
before compared calls), host_memory (page-locked copies that forks do not inherit: the
trials' kept draws), registry (what C++ calls).
"""
