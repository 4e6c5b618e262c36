"""Rerun a chapter's claims in-process against a theory mutant, reusing the measured side of one run.

A theory mutant cannot change a measurement (``model*.py`` never imports the
theory), so the expensive part of a chapter, its simulations, need not run
again per mutant. :class:`Replayer` executes the notebook's code cells up to the
claims table in this process (no kernel). Before that it wraps every function
of the chapter's ``model*.py`` modules in a memo: the first, unmutated run
records each call's result and the state its random generators were left in;
later runs that make the same call (the same arguments, the same generator
states, the same occurrence) get the recorded result back and the generators
advanced as the call would have left them. A call a mutant run makes that the
unmutated run never made is a *miss*: the measured side saw an input that the
theory changed, which is a chapter defect (a measurement that depends on the
formula under test), reported by name.

The unmutated theory is run twice (filling the memo, then from it) and both
runs must give the stored notebook's claims and verdicts: that is the check
that the replay is faithful for this chapter.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import importlib
import io
import pickle
import sys
import threading
import time
import types
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from theorylib.core.chapter import package_name

from ..paths import PACKAGES_DIR

REPORT_CELL = "claims.report()"
BASELINE_TIMEOUT_S = 900.0  # the unmutated runs are the chapter itself: at most 60 s alone, more on a busy machine


class MutantTimeout(Exception):
    """A mutant ran past its time limit (e.g. a root finder that no longer converges)."""


class ReplayMismatch(RuntimeError):
    """The in-process replay does not reproduce the chapter's claims: mutation results would mean nothing."""


@dataclass
class Outcome:
    """What one run of the claims against a theory gave."""

    status: str  # "survived", "killed", "error" (the run raised), "timeout"
    claims: list[dict[str, Any]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    error: str | None = None
    misses: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _feed(h: Any, value: Any, depth: int = 0) -> None:
    """Hash ``value`` by content: arrays by dtype, shape and data (never by memory layout), containers item
    by item, generators by state, plain objects by their attributes; anything else by its pickle."""
    import numpy as np

    if depth > 50:
        raise ValueError("too deep to hash")
    if isinstance(value, np.ndarray):
        h.update(b"A" + value.dtype.str.encode() + repr(value.shape).encode())
        if value.dtype == object:
            for item in value.ravel():
                _feed(h, item, depth + 1)
        else:
            h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple)):
        h.update(b"L" if isinstance(value, list) else b"T")
        h.update(str(len(value)).encode())
        for item in value:
            _feed(h, item, depth + 1)
    elif isinstance(value, dict):
        h.update(b"D" + str(len(value)).encode())
        for k in sorted(value, key=repr):
            _feed(h, k, depth + 1)
            _feed(h, value[k], depth + 1)
    elif isinstance(value, np.random.Generator):
        h.update(b"G" + repr(value.bit_generator.state).encode())
    elif isinstance(value, (str, bytes, int, float, complex, bool, type(None), np.generic)):
        h.update(b"S" + type(value).__name__.encode() + repr(value).encode())
    elif hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, types.FunctionType)):
        h.update(b"O" + type(value).__qualname__.encode())
        _feed(h, vars(value), depth + 1)
    elif hasattr(value, "__slots__"):
        h.update(b"O" + type(value).__qualname__.encode())
        _feed(h, {k: getattr(value, k) for k in value.__slots__ if hasattr(value, k)}, depth + 1)
    else:
        h.update(b"P" + pickle.dumps(value, protocol=5))


def digest(args: tuple, kwargs: dict) -> str:
    """The content hash of a call's arguments."""
    h = hashlib.sha1()
    _feed(h, (args, sorted(kwargs.items())))
    return h.hexdigest()


def _mutable_args(args: tuple, kwargs: dict) -> list[Any]:
    """The arguments whose state a call may change: generators, arrays, lists, dicts, plain objects."""
    import numpy as np

    found = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, (np.random.Generator, np.ndarray, list, dict)):
            found.append(value)
        elif hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType, types.FunctionType,
                                                                    types.BuiltinFunctionType, types.MethodType)):
            found.append(value)
    return found


def _state(value: Any) -> Any:
    """A copy of what a call could change in ``value`` (see :func:`_restore`)."""
    import numpy as np

    if isinstance(value, np.random.Generator):
        return value.bit_generator.state
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return pickle.loads(pickle.dumps(vars(value), protocol=5))


def _restore(value: Any, state: Any) -> None:
    """Put ``value`` back into the state a recorded call left it in."""
    import numpy as np

    if isinstance(value, np.random.Generator):
        value.bit_generator.state = state
    elif isinstance(value, np.ndarray):
        if value.flags.writeable and not np.array_equal(value, state, equal_nan=True):
            value[...] = state
    elif isinstance(value, list):
        value[:] = state
    elif isinstance(value, dict):
        value.clear()
        value.update(state)
    else:
        vars(value).clear()
        vars(value).update(pickle.loads(pickle.dumps(state, protocol=5)))


class Memo:
    """The recorded calls of the chapter's model functions (see the module docstring)."""

    def __init__(self) -> None:
        self.table: dict[tuple[str, str, int], tuple[bytes, list[Any]]] = {}
        self.recording = True
        self.seen: Counter[tuple[str, str]] = Counter()
        self.misses: list[str] = []
        self.unkeyed: set[str] = set()
        self.depth = 0  # only the outermost model call is recorded: nested ones are inside its result

    def start_run(self) -> None:
        self.seen = Counter()
        self.misses = []

    def wrap(self, name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def memoized(*args: Any, **kwargs: Any) -> Any:
            if self.depth:
                return fn(*args, **kwargs)
            try:
                key_digest = digest(args, kwargs)
            except Exception:  # an argument that cannot be pickled: no memo, the call runs
                self.unkeyed.add(name)
                self.depth += 1
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.depth -= 1
            n = self.seen[(name, key_digest)]
            self.seen[(name, key_digest)] += 1
            key = (name, key_digest, n)
            mutable = _mutable_args(args, kwargs)
            if key in self.table:
                blob, states = self.table[key]
                for value, state in zip(mutable, states, strict=True):
                    _restore(value, state)
                return pickle.loads(blob)
            if not self.recording:
                self.misses.append(name)
            self.depth += 1
            try:
                result = fn(*args, **kwargs)
            finally:
                self.depth -= 1
            if self.recording:
                try:
                    self.table[key] = (pickle.dumps(result, protocol=5), [_state(v) for v in mutable])
                except Exception:
                    self.unkeyed.add(name)
            return result

        memoized.__wrapped_by_theorylib_memo__ = True  # type: ignore[attr-defined]
        return memoized


class TheoryMemo:
    """The recorded calls of the chapter's theory functions, replayed in a mutant where they cannot differ.

    A mutant changes one function ``g`` of the theory. A theory call whose recorded run never reached ``g``
    (directly or through any other theory code it called) computes the same value in the mutant, so it is
    answered from the unmutated run. While recording, a profile hook notes which functions of the theory
    file run inside each call (the top part of ``co_qualname``: nested functions, lambdas and comprehensions
    count as their enclosing function), and each wrapped call also notes itself (so a cached
    ``functools.lru_cache`` hit still counts). A call is keyed by the function, the content hash of its
    arguments and mpmath's working precision; a call whose arguments cannot be hashed, whose result cannot
    be pickled, or which changes its arguments (a generator it draws from, an array it fills) is never
    replayed. A mutant outside any function (a module constant) or inside a class turns the memo off. The
    theory must keep no state between calls other than ``functools`` caches (a chapter's theory is pure).
    """

    def __init__(self) -> None:
        self.table: dict[tuple[str, str, int], tuple[bytes, frozenset[str]] | None] = {}
        self.recording = True
        self.mutated: str | None = None  # the top-level name the mutant changed; "" turns the memo off
        self.filename = ""
        self._stack: list[set[str]] = []

    def install(self, module: types.ModuleType, mutated: str | None) -> None:
        """Wrap the functions defined in ``module`` (a fresh theory module) for a run against the mutant of
        ``mutated`` (a qualified function name, ``<module>`` for a module constant; None: the unmutated
        theory)."""
        top = (mutated or "").split(".")[0]
        if mutated is not None and (top == "<module>" or isinstance(vars(module).get(top), type)):
            top = ""  # a module constant or a class: any call may see it, so nothing is replayed
        self.filename, self.mutated, self._stack = module.__file__ or "", None if mutated is None else top, []
        for name, value in list(vars(module).items()):
            code = getattr(getattr(value, "__wrapped__", value), "__code__", None)
            if callable(value) and not isinstance(value, type) and code is not None \
                    and code.co_filename == self.filename:
                setattr(module, name, self.wrap(name, value))

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and self._stack and frame.f_code.co_filename == self.filename:
            self._stack[-1].add(frame.f_code.co_qualname.split(".")[0])

    def wrap(self, name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def memoized(*args: Any, **kwargs: Any) -> Any:
            if self._stack:
                self._stack[-1].add(name)
            if not self.recording and self.mutated == "":
                return fn(*args, **kwargs)
            try:
                import mpmath

                key = (name, digest(args, kwargs), mpmath.mp.prec)
            except Exception:  # an argument that cannot be hashed: never replayed
                return fn(*args, **kwargs)
            if not self.recording:
                entry = self.table.get(key)
                if entry is not None and self.mutated not in entry[1]:
                    return pickle.loads(entry[0])
                return fn(*args, **kwargs)
            return self._record(key, fn, args, kwargs)

        memoized.__wrapped_by_theorylib_memo__ = True  # type: ignore[attr-defined]
        return memoized

    def _record(self, key: tuple[str, str, int], fn: Any, args: tuple, kwargs: dict) -> Any:
        reached: set[str] = {key[0]}
        outer = not self._stack
        previous = sys.getprofile()
        self._stack.append(reached)
        if outer:
            sys.setprofile(self._profile)
        try:
            result = fn(*args, **kwargs)
        finally:
            self._stack.pop()
            if outer:
                sys.setprofile(previous)
            else:
                # A call answered by a functools cache reaches only itself; the functions its first, computing
                # call reached are still behind its value, so the caller inherits them too.
                prior = self.table.get(key)
                self._stack[-1].update(reached if prior is None else reached | prior[1])
        try:
            pure = digest(args, kwargs) == key[1]
            blob = pickle.dumps(result, protocol=5) if pure else None
        except Exception:
            blob = None
        known = self.table.get(key, (b"", frozenset()))
        if blob is None or known is None:
            self.table[key] = None  # impure or unpicklable once: never replayed
        else:  # the union over repeated calls (a second call may only hit a cache the first one filled)
            self.table[key] = (blob, known[1] | reached)
        return result


def _raise_in(thread_id: int, exc: type[BaseException]) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc))


@contextlib.contextmanager
def _time_limit(seconds: float):
    """Raise :class:`MutantTimeout` in this thread after ``seconds`` (checked between Python bytecodes)."""
    done = threading.Event()
    me = threading.get_ident()

    def watchdog() -> None:
        if not done.wait(seconds):
            _raise_in(me, MutantTimeout)

    t = threading.Thread(target=watchdog, daemon=True)
    t.start()
    try:
        yield
    finally:
        done.set()
        t.join()


class Replayer:
    """Runs one chapter's claims in this process, against its theory or a mutant of it."""

    def __init__(self, slug: str, notebook: Path, defaults: dict[str, Any], *, packages: Path = PACKAGES_DIR) -> None:
        self.slug = slug
        self.package = f"theorylib.chapters.{package_name(slug)}"
        self.folder = packages / package_name(slug)
        self.notebook = notebook
        self.defaults = dict(defaults)
        nb = nbformat.read(str(notebook), as_version=4)
        cells = [c.source for c in nb.cells if c.cell_type == "code"]
        upto = next((i for i, src in enumerate(cells) if REPORT_CELL in src), None)
        if upto is None:
            raise ReplayMismatch(f"{notebook.name}: no cell calls {REPORT_CELL}")
        # The parameters cell is replaced by the declared defaults.
        self.cells = cells[1:upto + 1]
        self.theory_source = (self.folder / "theory.py").read_text()
        self.memo = Memo()
        self.theory_memo = TheoryMemo()
        self.recording_seconds = 0.0
        self._theory_users = self._modules_importing_theory()
        self._wrap_models()

    def _modules_importing_theory(self) -> set[str]:
        """The package's modules (not the models) that import the theory: they are re-imported per mutant."""
        import ast

        users = set()
        for path in self.folder.glob("*.py"):
            if path.stem in ("theory", "__init__") or path.stem.startswith("model"):
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and (
                        (node.module or "").endswith("theory")
                        or any(a.name == "theory" for a in node.names)):
                    users.add(path.stem)
                elif isinstance(node, ast.Import) and any(a.name.endswith(".theory") for a in node.names):
                    users.add(path.stem)
        return users

    def _wrap_models(self) -> None:
        for path in sorted(self.folder.glob("model*.py")):
            module = importlib.import_module(f"{self.package}.{path.stem}")
            for name, value in list(vars(module).items()):
                if (isinstance(value, types.FunctionType) and value.__module__ == module.__name__
                        and not getattr(value, "__wrapped_by_theorylib_memo__", False)):
                    setattr(module, name, self.memo.wrap(f"{path.stem}.{name}", value))

    def _install_theory(self, source: str, mutated: str | None) -> None:
        """Make ``source`` the chapter's theory module, with its functions in the theory memo (``mutated``: the
        function the mutant changed, None for the unmutated theory), and re-import what depends on it (never
        the models)."""
        name = f"{self.package}.theory"
        module = types.ModuleType(name)
        module.__file__ = str(self.folder / "theory.py")
        module.__package__ = self.package
        sys.modules[name] = module
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the mutant under test
        self.theory_memo.install(module, mutated)
        package = importlib.import_module(self.package)
        package.theory = module
        for mod_name in [m for m in sys.modules if m.startswith(self.package + ".")]:
            stem = mod_name.rsplit(".", 1)[1]
            if stem in self._theory_users:
                del sys.modules[mod_name]
                if hasattr(package, stem):
                    delattr(package, stem)

    def run(self, source: str | None = None, *, mutated: str | None = None, timeout: float = 120.0) -> Outcome:
        """The claims of the chapter against ``source`` (default: its own theory), a mutant of the function
        ``mutated`` (its qualified name, ``<module>`` for a module constant; given with ``source``)."""
        import matplotlib

        matplotlib.use("Agg")
        from theorylib.core.claims import ClaimsFailed

        if (source is None) != (mutated is None):
            raise ValueError("a mutant's source and the function it mutates go together")
        self._install_theory(self.theory_source if source is None else source, mutated)
        self.memo.start_run()
        namespace: dict[str, Any] = {"__name__": "__main__", **self.defaults}
        start = time.perf_counter()
        status, error = "survived", None
        sink = io.StringIO()
        try:
            with _time_limit(timeout), contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                    warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for src in self.cells:
                    exec(compile(src, f"<{self.slug} cell>", "exec"), namespace)  # noqa: S102
        except ClaimsFailed:
            status = "killed"
        except MutantTimeout:
            status, error = "timeout", f"no result within {timeout:.0f} s"
        except Exception as e:  # a mutant that makes the chapter raise: detected, but not by a claim
            status, error = "error", f"{type(e).__name__}: {str(e)[:300]}"
        finally:
            import matplotlib.pyplot as plt

            plt.close("all")
        claims = namespace.get("claims")
        records = [c.as_record() for c in getattr(claims, "claims", [])]
        failed = [r["name"] for r in records if not r["passed"]]
        return Outcome(status, records, failed, error, sorted(set(self.memo.misses)),
                       round(time.perf_counter() - start, 3))

    def baseline(self, stored: list[dict[str, Any]] | None) -> Outcome:
        """Run the unmutated theory twice (record, then replay) and check both against the stored claims."""
        self.memo.recording = self.theory_memo.recording = True
        first = self.run(timeout=BASELINE_TIMEOUT_S)
        self.recording_seconds = first.seconds
        self.memo.recording = self.theory_memo.recording = False
        if first.status != "survived":  # before the replay: an unfinished recording would look like a miss
            raise ReplayMismatch(f"{self.slug}: the unmutated theory does not pass in-process (recording): "
                                 f"{first.status} {first.error or first.failed}")
        second = self.run(timeout=BASELINE_TIMEOUT_S)
        if second.misses:
            raise ReplayMismatch(f"{self.slug}: replaying the unmutated theory calls the model differently "
                                 f"({', '.join(second.misses)}): a model call with a side effect the memo cannot see")
        for label, out in (("recording", first), ("replay", second)):
            if out.status != "survived":
                raise ReplayMismatch(f"{self.slug}: the unmutated theory does not pass in-process ({label}): "
                                     f"{out.status} {out.error or out.failed}")
        def digest(recs: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
            return [(r["name"], r["passed"]) for r in recs]
        if digest(first.claims) != digest(second.claims) or [r["measured"] for r in first.claims] != [
                r["measured"] for r in second.claims]:
            raise ReplayMismatch(f"{self.slug}: replaying the recorded model calls changes the claims")
        if stored is not None and digest(stored) != digest(first.claims):
            raise ReplayMismatch(f"{self.slug}: the in-process claims differ from the stored notebook's")
        return second
