"""The torch.utils.cpp_extension.load_inline / load calls of a KernelBench answer, read
statically (the file is parsed, never run) and normalised, so the orchestrator can compile
them with kagent's nvcc pipeline before the worker is ready, and the worker can recognise
the same call when the answer makes it.

Both sides use this module: the orchestrator runs it as a script (python3 -I, no torch) on
the answer's file; the worker imports it (normalize, call_key) inside its patched
load_inline. A call's key is the SHA-256 of its normalised arguments, so a call whose
arguments at run time differ from what was read here simply misses and falls back to
torch's own load_inline.

Constant folding covers what answers write: string literals and their concatenation,
module-level (and same-function) variables assigned constants, f-strings of constants,
str.join, textwrap.dedent, lists, tuples and dicts of constants.
"""

import ast
import hashlib
import json
import re
import sys
import textwrap

# load_inline's parameters in order (torch 2.11; tests compare with inspect.signature).
LOAD_INLINE_PARAMS = [
    "name", "cpp_sources", "cuda_sources", "sycl_sources", "functions", "extra_cflags", "extra_cuda_cflags",
    "extra_sycl_cflags", "extra_ldflags", "extra_include_paths", "build_directory", "verbose", "with_cuda",
    "with_sycl", "is_python_module", "with_pytorch_error_handling", "keep_intermediates", "use_pch",
    "no_implicit_headers",
]
LOAD_PARAMS = [
    "name", "sources", "extra_cflags", "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags",
    "extra_include_paths", "build_directory", "verbose", "with_cuda", "with_sycl", "is_python_module",
    "is_standalone", "keep_intermediates",
]
# Options that change nothing kagent builds (where torch puts files, what it prints, a
# precompiled header, how C++ exceptions reach Python: the dispatcher turns them into
# RuntimeError as pybind does).
IGNORED = {"build_directory", "verbose", "keep_intermediates", "use_pch", "with_pytorch_error_handling"}


class Unsupported(Exception):
    """The call is valid for torch but kagent's light path does not build it; the message says why."""


class TorchBuildFails(Unsupported):
    """torch's own load_inline cannot build the call: kagent builds nothing either, and the
    worker raises torch's build error when the answer makes it (kagent must not build what
    torch cannot: the answer's except and its fallback are what KernelBench runs)."""


class NotConstant(Exception):
    pass


def _strings(value, what):
    """None, a string or a list of strings -> a list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise Unsupported(f"{what} is not a string or a list of strings")


class _CppName(str):
    """The C++ function a PYBIND11_MODULE's m.def binds (a docstring is a plain str)."""


_PYBIND_MODULE = re.compile(r"PYBIND11_MODULE\s*\(\s*\w+\s*,\s*(\w+)\s*\)\s*\{")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _pybind_module_count(sources):
    """How many PYBIND11_MODULE blocks the sources define, comments left out."""
    return sum(len(_PYBIND_MODULE.findall(_COMMENTS.sub(" ", src))) for src in sources)


def pybind_module_functions(sources):
    """{python name: C++ function} from the sources' own PYBIND11_MODULE, when it holds only
    `m.def("name", &function[, "doc"]);` statements (anything else, such as py::arg
    defaults, lambdas or classes, is Unsupported: the ops would not behave the same)."""
    found = {}
    modules = _pybind_module_count(sources)
    if modules > 1:  # e.g. one in cpp_sources and one in cuda_sources: torch's link fails
        raise TorchBuildFails(f"the sources define {modules} PYBIND11_MODULE blocks: torch's build of them fails "
                              "(PyInit_ defined more than once)")
    for src in sources:
        text = _COMMENTS.sub(" ", src)
        for m in _PYBIND_MODULE.finditer(text):
            depth, i = 1, m.end()
            while i < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            statement = re.compile(r'\s*' + m.group(1) + r'\.def\(\s*"(\w+)"\s*,\s*&?\s*(\w+)\s*(?:,\s*"[^"]*"\s*)?\)\s*')
            for part in text[m.end():i - 1].split(";"):
                if not part.strip():
                    continue
                d = statement.fullmatch(part)
                if not d:
                    raise Unsupported(f"its own PYBIND11_MODULE binds more than plain functions: {part.strip()[:60]}")
                found[d.group(1)] = _CppName(d.group(2))
    if not found:
        raise Unsupported("no functions= list and no PYBIND11_MODULE kagent can read")
    return found


# A load() source file's suffix -> which of load_inline's lists holds its text (torch compiles
# .cu/.cuh with nvcc and the rest with the host compiler, as load_inline's cuda.cu and main.cpp).
CUDA_SUFFIXES = (".cu", ".cuh")
CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".c")


def load_as_inline(arguments):
    """A load() call whose `sources` are already read, [(suffix, text)], as the load_inline call
    that builds the same files: each file's text unchanged (no_implicit_headers: load() adds no
    header of its own), at most one C++ and one CUDA file (load_inline writes one of each)."""
    a = dict(arguments)
    sources = a.pop("sources", None) or []
    if a.pop("is_standalone", False):
        raise Unsupported("is_standalone=True (an executable, not an extension)")
    for ignored in IGNORED:
        a.pop(ignored, None)
    cpp, cuda = [], []
    for suffix, text in sources:
        if suffix.lower() in CUDA_SUFFIXES:
            cuda.append(text)
        elif suffix.lower() in CPP_SUFFIXES:
            cpp.append(text)
        else:
            raise Unsupported(f"a source file of suffix {suffix!r} (torch decides how to build it, kagent does not)")
    if len(cpp) > 1 or len(cuda) > 1 or not sources:
        raise Unsupported(f"{len(cpp)} C++ and {len(cuda)} CUDA source files (kagent builds one of each)")
    if cuda and not cpp:
        # kagent binds the module's functions in main.cpp, which must declare them: torch builds
        # the .cu alone, so the declarations are the .cu's own definitions' heads.
        cpp = [_declarations_from_definitions(cuda[0])]
    a.update(cpp_sources=cpp, cuda_sources=cuda, functions=None, no_implicit_headers=True)
    return a


# The types a declaration made here may name: torch/extension.h declares them all, so the
# declarations cannot fail to compile where the .cu's own code would not.
_PLAIN_TYPES = re.compile(r"(?:const\s+)?(?:torch::Tensor|at::Tensor|std::vector<(?:torch|at)::Tensor>|int|int64_t|"
                          r"long|float|double|bool|void)(?:\s*&)?")


def _declarations_from_definitions(cuda_text):
    """`#include <torch/extension.h>` and a declaration of each function the .cu's own
    PYBIND11_MODULE binds, copied from its definition's head, where every type in it is a plain
    one (_PLAIN_TYPES) and the function is defined once; else Unsupported (torch builds it)."""
    text = _COMMENTS.sub(" ", cuda_text)
    lines = ["#include <torch/extension.h>"]
    for function in sorted(set(pybind_module_functions([cuda_text]).values())):
        heads = re.findall(r"(?:^|[;}\n])\s*([\w:<>&\s]+?)\s+" + re.escape(function) + r"\s*\(([^(){};]*)\)\s*\{", text)
        if len(heads) != 1:
            raise Unsupported(f"{function} is defined {len(heads)} times in the .cu (kagent declares it from one definition)")
        result, params = heads[0][0].strip(), heads[0][1].strip()
        params = [p.strip() for p in params.split(",")] if params else []
        typed = [re.fullmatch(r"(.+?)\s*\b\w+", p) for p in params]
        if not _PLAIN_TYPES.fullmatch(result) or not all(t and _PLAIN_TYPES.fullmatch(t.group(1).strip()) for t in typed):
            raise Unsupported(f"{function}'s signature names a type kagent does not declare it with")
        lines.append(f"{result} {function}({', '.join(params)});")
    return "\n".join(lines) + "\n"


def read_source_files(paths):
    """load()'s `sources` at run time, the files the answer wrote: [(suffix, text)], or Unsupported."""
    if isinstance(paths, str):
        paths = [paths]
    out = []
    for path in paths or []:
        if not isinstance(path, str):
            raise Unsupported("a source that is not a path")
        try:
            with open(path, encoding="utf-8") as f:
                out.append((_suffix(path), f.read()))
        except (OSError, UnicodeDecodeError) as e:
            raise Unsupported(f"source file {path} cannot be read: {e}") from None
    return out


def normalize(kind, arguments):
    """The arguments of a load_inline call (a dict by parameter name; absent ones take
    torch's defaults) -> what kagent builds from, or Unsupported. A load() call comes with its
    `sources` read, [(suffix, text)] (read_source_files at run time; the files the answer writes
    from constants, read statically): it is built as load_inline would build the same files."""
    if kind == "load":
        return normalize("load_inline", load_as_inline(arguments))
    unknown = sorted(set(arguments) - set(LOAD_INLINE_PARAMS))
    if unknown:
        raise Unsupported(f"unknown option {unknown[0]}")
    a = dict(arguments)
    if not isinstance(a.get("name"), str) or not a["name"].isidentifier():
        raise Unsupported("the extension's name is not an identifier")
    if _strings(a.get("sycl_sources"), "sycl_sources") or a.get("with_sycl") or _strings(
            a.get("extra_sycl_cflags"), "extra_sycl_cflags"):
        raise Unsupported("SYCL sources")
    if a.get("is_python_module", True) is not True:
        raise Unsupported("is_python_module=False (the library is loaded as plain ops)")
    cuda_sources = _strings(a.get("cuda_sources"), "cuda_sources")
    if a.get("with_cuda") is False and cuda_sources:
        raise Unsupported("with_cuda=False with CUDA sources")
    functions = a.get("functions")
    cpp_sources = _strings(a.get("cpp_sources"), "cpp_sources")
    sources = cpp_sources + cuda_sources
    if functions is None:  # the sources bind themselves: kagent binds what their module lists
        functions = pybind_module_functions(sources)
    elif _pybind_module_count(sources):
        # torch writes a PYBIND11_MODULE of its own for functions=: two modules, one PyInit_.
        # (CUDA-L1 wrote this in 17 of 125 answers; kagent once bound them and ran kernels that
        # torch never builds.)
        raise TorchBuildFails("functions= is given and the sources define their own PYBIND11_MODULE: torch's "
                              "load_inline adds a second one for functions=, and the build fails (PyInit_"
                              f"{a['name']} defined twice)")
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, (list, tuple)) and all(isinstance(f, str) for f in functions):
        functions = {f: f for f in functions}
    if not isinstance(functions, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                  for k, v in functions.items()):
        raise Unsupported("functions is not a list of names or a dict of names to docstrings")
    for f in functions:
        if not f.isidentifier():
            raise Unsupported(f"function name {f!r} is not an identifier")
    if not functions:
        raise Unsupported("functions is empty")
    no_implicit_headers = a.get("no_implicit_headers", False)
    if not isinstance(no_implicit_headers, bool):
        raise Unsupported("no_implicit_headers is not a bool")
    return {
        "name": a["name"],
        "cpp_sources": cpp_sources,
        "cuda_sources": cuda_sources,
        # docstrings change nothing kagent builds; "name=cpp_function" where the two differ
        "functions": sorted(f"{f}={v}" if isinstance(v, _CppName) and v != f else f for f, v in functions.items()),
        "extra_cflags": _strings(a.get("extra_cflags"), "extra_cflags"),
        "extra_cuda_cflags": _strings(a.get("extra_cuda_cflags"), "extra_cuda_cflags"),
        "extra_ldflags": _strings(a.get("extra_ldflags"), "extra_ldflags"),
        "extra_include_paths": _strings(a.get("extra_include_paths"), "extra_include_paths"),
        "no_implicit_headers": no_implicit_headers,
    }


def call_key(normalized):
    text = json.dumps(normalized, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- static reading

_CPP_EXTENSION = "torch.utils.cpp_extension"


class _Folder:
    """Evaluates constant expressions over an environment of names already folded."""

    def __init__(self, env, aliases, exprs=None, files=None):
        self.env = env
        self.aliases = aliases  # local name -> dotted module path it stands for
        self.exprs = {} if exprs is None else exprs  # name -> the expression it was last given (not a constant)
        self.files = {} if files is None else files  # path_key -> (suffix, text) written by the answer

    def copy(self):
        """A function or class body's view: the names known so far; its own assignments stay in it."""
        return _Folder(dict(self.env), dict(self.aliases), dict(self.exprs), dict(self.files))

    def _path(self, node):
        """A path expression as (its constant value, None), or (None, the expression a name was
        last given, else itself)."""
        try:
            value = self.fold(node)
            if isinstance(value, str):
                return value, None
        except NotConstant:
            pass
        if isinstance(node, ast.Name) and node.id in self.exprs:
            node = self.exprs[node.id]
        return None, node

    def path_key(self, node):
        """What names one file across the answer's lines: a constant path, or the expression that
        makes it (`os.path.join(tmp_dir, "k.cu")`, a name given one), compared as written."""
        value, expr = self._path(node)
        return "const:" + value if expr is None else "expr:" + ast.dump(expr)

    def suffix_of(self, node):
        """The file suffix a path expression ends in: its constant value's, else the last string
        constant in it with one (`os.path.join(d, "k.cu")` -> ".cu"); "" when none."""
        value, expr = self._path(node)
        if expr is None:
            return _suffix(value)
        found = ""
        for n in ast.walk(expr):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and _suffix(n.value):
                found = _suffix(n.value)
        return found

    def dotted(self, node):
        """`torch.utils.cpp_extension.load_inline` (through import aliases) or None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.aliases:
            return None
        return ".".join([self.aliases[node.id]] + parts[::-1])

    def fold(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            raise NotConstant(f"`{node.id}` is not a module-level constant")
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.fold(e) for e in node.elts]
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise NotConstant("a dict with ** unpacking")
            return {self.fold(k): self.fold(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.fold(node.left), self.fold(node.right)
            if type(left) is type(right) and isinstance(left, (str, list)):
                return left + right
            raise NotConstant("+ of values that are not both strings or both lists")
        if isinstance(node, ast.JoinedStr):
            out = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    out.append(part.value)
                elif isinstance(part, ast.FormattedValue) and part.format_spec is None:
                    value = self.fold(part.value)
                    out.append({-1: str, 115: str, 114: repr, 97: ascii}[part.conversion](value))
                else:
                    raise NotConstant("an f-string with a format spec")
            return "".join(out)
        if isinstance(node, ast.Call) and not node.keywords:
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "join" and len(node.args) == 1:
                sep, items = self.fold(func.value), self.fold(node.args[0])
                if isinstance(sep, str) and isinstance(items, list) and all(isinstance(i, str) for i in items):
                    return sep.join(items)
            if isinstance(func, ast.Attribute) and func.attr in ("strip", "lstrip", "rstrip") and not node.args:
                s = self.fold(func.value)
                if isinstance(s, str):
                    return getattr(s, func.attr)()
            if self.dotted(func) == "textwrap.dedent" and len(node.args) == 1:
                s = self.fold(node.args[0])
                if isinstance(s, str):
                    return textwrap.dedent(s)
        raise NotConstant(f"{type(node).__name__} at line {getattr(node, 'lineno', '?')} is not a constant")


def _suffix(path):
    base = path.rsplit("/", 1)[-1]
    return base[base.rfind("."):] if "." in base else ""


def _constant_writes(body, handle, folder):
    """The texts `handle.write(...)` statements of `body` write, each a constant string or its
    .encode() (utf-8); None where one is anything else."""
    parts = []
    for s in body:
        if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute)
                and s.value.func.attr == "write" and isinstance(s.value.func.value, ast.Name)
                and s.value.func.value.id == handle and len(s.value.args) == 1):
            continue
        text = s.value.args[0]
        try:
            if isinstance(text, ast.Call) and isinstance(text.func, ast.Attribute) and text.func.attr == "encode":
                if [folder.fold(a) for a in text.args] not in ([], ["utf-8"], ["utf8"]):
                    return None
                text = text.func.value
            value = folder.fold(text)
        except NotConstant:
            return None
        if not isinstance(value, str):
            return None
        parts.append(value)
    return parts


def _note_written_file(stmt, folder):
    """`with open(PATH, "w") as f: f.write(TEXT)` where TEXT is a constant (or its .encode()):
    the answer writes a source file at run time that a load() call then builds. Its text is known
    now; a path written any other way is forgotten."""
    for item in stmt.items:
        call = item.context_expr
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "open"
                and call.args and isinstance(item.optional_vars, ast.Name)):
            continue
        key = folder.path_key(call.args[0])
        folder.files.pop(key, None)
        mode_node = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
        try:
            mode = folder.fold(mode_node) if mode_node is not None else "r"
        except NotConstant:
            continue
        if not isinstance(mode, str) or "w" not in mode:
            continue
        parts = _constant_writes(stmt.body, item.optional_vars.id, folder)
        if parts:
            folder.files[key] = (folder.suffix_of(call.args[0]), "".join(parts))


def _note_import(node, aliases):
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                aliases[a.asname] = a.name
            else:
                top = a.name.split(".")[0]
                aliases[top] = top
    elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        for a in node.names:
            aliases[a.asname or a.name] = f"{node.module}.{a.name}"


def _assign(node, folder):
    """Assignments: a constant value enters the folder's names, anything else leaves them."""
    env = folder.env
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        try:
            if not isinstance(node.op, ast.Add):
                raise NotConstant("not +=")
            env[node.target.id] = folder.fold(ast.BinOp(node.target, ast.Add(), node.value))
        except NotConstant:
            env.pop(node.target.id, None)
        return
    else:
        return
    for t in targets:
        if isinstance(t, ast.Name):
            folder.exprs.pop(t.id, None)
            try:
                env[t.id] = folder.fold(value)
            except NotConstant:
                env.pop(t.id, None)
                folder.exprs[t.id] = value
        else:  # tuple unpacking and the like: those names are no longer known constants
            for n in ast.walk(t):
                if isinstance(n, ast.Name):
                    env.pop(n.id, None)
                    folder.exprs.pop(n.id, None)


def _read_call(node, kind, folder):
    params = LOAD_INLINE_PARAMS if kind == "load_inline" else LOAD_PARAMS
    record = {"kind": kind, "line": node.lineno, "name": None}
    try:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unsupported("*args or **kwargs in the call")
        if len(node.args) > len(params):
            raise Unsupported("more positional arguments than the function takes")
        arguments = dict(zip(params, node.args))
        for k in node.keywords:
            arguments[k.arg] = k.value
        try:  # the name first: every reason below is recorded under it
            name = folder.fold(arguments["name"]) if "name" in arguments else None
            record["name"] = name if isinstance(name, str) else None
        except NotConstant:
            pass
        unknown = sorted(set(arguments) - set(params))
        if unknown:
            record["unknown_option"] = unknown[0]
            raise Unsupported(f"unknown option {unknown[0]}")
        folded = {}
        for p, value_node in arguments.items():
            if p in IGNORED:
                continue
            if kind == "load" and p == "sources":
                folded[p] = _written_sources(value_node, folder)
                continue
            try:
                folded[p] = folder.fold(value_node)
            except NotConstant as nc:
                raise Unsupported(f"{p} is not a constant ({nc})") from None
        normalized = normalize(kind, folded)
        record.update(ok=True, key=call_key(normalized), call=normalized)
    except Unsupported as u:
        record.update(ok=False, reason=str(u))
    return record


def _written_sources(node, folder):
    """load()'s `sources`, each a file the answer writes from a constant before the call."""
    items = node.elts if isinstance(node, (ast.List, ast.Tuple)) else [node]
    out = []
    for item in items:
        written = folder.files.get(folder.path_key(item))
        if written is None:
            raise Unsupported("load() builds source files named at run time; kagent builds one only where the "
                              "answer writes it from a constant before the call (with open(path, 'w') as f: "
                              "f.write(TEXT))")
        out.append(written)
    return out


def _scan(node, folder, out):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            target = folder.dotted(n.func)
            if target in (f"{_CPP_EXTENSION}.load_inline", f"{_CPP_EXTENSION}.load"):
                out.append(_read_call(n, target.rsplit(".", 1)[1], folder))


_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def _walk(body, folder, out):
    """Statements in order: imports and constants update the folder; load_inline/load calls
    are read with the names known at that point. A function or class body is read with a
    copy (its assignments stay local). A guess that differs from what the file does at run
    time only makes the call's key miss, and torch's load_inline builds it."""
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _note_import(stmt, folder.aliases)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for d in stmt.decorator_list:
                _scan(d, folder, out)
            _walk(stmt.body, folder.copy(), out)
        elif any(isinstance(getattr(stmt, f, None), list) for f in _BLOCKS):
            if isinstance(stmt, ast.With):
                _note_written_file(stmt, folder)
            for field, value in ast.iter_fields(stmt):
                for v in value if isinstance(value, list) and field not in _BLOCKS else [value]:
                    if isinstance(v, ast.AST):
                        _scan(v, folder, out)
            for field in _BLOCKS:
                for s in getattr(stmt, field, None) or []:
                    _walk(s.body if isinstance(s, ast.ExceptHandler) else [s], folder, out)
        else:
            _scan(stmt, folder, out)
            _assign(stmt, folder)


def extract_calls(source):
    """Every load_inline/load call in the source, in order: {"kind", "line", "name", "ok",
    "key", "call"} where kagent can build it, else {"ok": false, "reason"}."""
    calls = []
    _walk(ast.parse(source).body, _Folder({}, {}), calls)
    return calls


def main(argv):
    """python3 inline_calls.py ANSWER.py -> JSON on stdout: {"calls": [...]} or {"error": "..."}."""
    try:  # the orchestrator runs this on untrusted text: bound its memory (it never runs the text)
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
    except (ImportError, ValueError, OSError):
        pass
    try:
        with open(argv[1], encoding="utf-8", errors="replace") as f:
            source = f.read()
        out = {"calls": extract_calls(source)}
    except SyntaxError as e:
        out = {"error": f"SyntaxError: {e.msg} (line {e.lineno})"}
    except (RecursionError, MemoryError) as e:
        out = {"error": f"{type(e).__name__} while reading the file"}
    sys.stdout.write(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
