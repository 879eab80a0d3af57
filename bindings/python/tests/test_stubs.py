"""The hand-written stub python/hurray/_native.pyi names exactly what the native
module exports (classes, functions, members), so type checkers see the real API."""

import ast
import inspect
import pathlib

import hurray
from hurray import _native

STUB = pathlib.Path(hurray.__file__).with_name("_native.pyi")


def stub_names():
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            top.add(node.target.id)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
    return top, members


def test_stub_matches_the_native_module():
    top, members = stub_names()
    runtime = {n for n in dir(_native) if not (n.startswith("__") and n != "__version__")}
    runtime.discard("__version__")
    top.discard("__version__")
    assert {n for n in top if not n.startswith("_") or n in runtime} - runtime == set(), "stub names missing at runtime"
    assert runtime - top == set(), "runtime names missing from the stub"
    for cls, names in members.items():
        obj = getattr(_native, cls)
        for n in names - {"__init__", "__hash__", "__eq__"}:
            assert hasattr(obj, n), f"{cls}.{n} in the stub but not at runtime"
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            public = {n for n, v in vars(obj).items() if not n.startswith("__") or n in ("__array__", "__dlpack__", "__dlpack_device__", "__hurray__", "__reduce_ex__", "__iter__", "__next__", "__enter__", "__exit__")}
            assert public - names == set(), f"{cls} members missing from the stub: {public - names}"
