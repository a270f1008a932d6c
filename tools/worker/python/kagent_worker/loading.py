"""Errors with a stable kind, and executing a user's Python file as a module.

The kind lets the C++ side classify a failure without parsing its text: problem_load_error,
problem_incomplete, file_not_found, candidate_load_error, compile_error, invalid,
load_inline_option.
"""

import importlib.util
import os
import sys
import traceback


class KagentError(Exception):
    """An error with a stable kind: problem_load_error, problem_incomplete, file_not_found,
    candidate_load_error, compile_error, invalid, load_inline_option."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


class ExtensionBuildError(KagentError, RuntimeError):
    """A compile_error raised where an answer builds an extension: a RuntimeError, as torch's
    "Error building extension" is, so that an answer's `except RuntimeError` and its fallback run
    as they do under KernelBench's harness."""

    def __init__(self, message):
        super().__init__("compile_error", message)


_module_counter = [0]


def short_exception(exc, path):
    """One line: 'SyntaxError: invalid syntax (x.py, line 3)' or the last frame in the file."""
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} ({os.path.basename(path)}, line {exc.lineno})"
    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == path:
            where = f" ({os.path.basename(path)}, line {frame.lineno})"
            break
    return f"{type(exc).__name__}: {exc}{where}"


def exec_file(path, kind, inherit=None):
    """Runs the file as a fresh module. `inherit`: names the module starts with (KernelBench's
    harness runs an answer in the dict the problem's source ran in, so an answer may use the
    problem's globals, `batch_size` or a helper, without defining them)."""
    if not os.path.isfile(path):
        raise KagentError("file_not_found", f"no such file: {path}")
    _module_counter[0] += 1
    name = f"kagent_loaded_{_module_counter[0]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    for key, value in (inherit or {}).items():
        if not key.startswith("__"):  # the module's own name, file, loader and builtins stay its own
            setattr(module, key, value)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except KagentError:  # already classified (kagent's load_inline in the file)
        del sys.modules[name]
        raise
    except Exception as exc:  # the file's own error, whatever it is
        del sys.modules[name]
        raise KagentError(kind, short_exception(exc, path)) from None
    return module
