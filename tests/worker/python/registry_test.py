"""The functions C++ calls: one list on each side (python_functions.h, registry.FUNCTIONS).
A function renamed on one side only fails here."""

import os
import re

from conftest import REPO
from kagent_worker import registry

HEADER = os.path.join(REPO, "tools", "worker", "python", "python_functions.h")


def cpp_names():
    text = open(HEADER).read()
    table = text[text.index("kPyFunctionNames"):]
    return re.findall(r'\{PyFn::\w+, "(\w+)"\}', table)


def cpp_enumerators():
    text = open(HEADER).read()
    body = text[text.index("enum class PyFn {") + len("enum class PyFn {"):text.index("};")]
    return [e.strip() for e in body.split(",") if e.strip()]


def test_both_sides_list_the_same_functions():
    names = cpp_names()
    assert names, "no names parsed from python_functions.h"
    assert len(names) == len(set(names))
    assert sorted(names) == sorted(registry.FUNCTIONS), (
        f"only in C++: {sorted(set(names) - set(registry.FUNCTIONS))}; "
        f"only in Python: {sorted(set(registry.FUNCTIONS) - set(names))}")


def test_every_enumerator_has_a_name_and_the_table_size_matches():
    enumerators = cpp_enumerators()
    assert len(enumerators) == len(cpp_names())
    size = re.search(r"EnumNames<PyFn, (\d+)>", open(HEADER).read())
    assert size and int(size.group(1)) == len(enumerators)


def test_every_registered_function_is_callable():
    for name, fn in registry.FUNCTIONS.items():
        assert callable(fn), name


def test_cpp_calls_python_only_through_the_table():
    """No C++ file calls a helper by a string literal: every call names a PyFn."""
    offenders = []
    for root in ("tools", "profiler", "agent", "tests", "bench"):
        for folder, _, files in os.walk(os.path.join(REPO, root)):
            for f in files:
                if f.endswith((".cpp", ".h")):
                    path = os.path.join(folder, f)
                    if re.search(r'\.call\(\s*"', open(path, errors="replace").read()):
                        offenders.append(os.path.relpath(path, REPO))
    assert not offenders, offenders
