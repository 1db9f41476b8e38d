"""Exceptions that escape a frozen function's Python: the user's class *and* ``RuntimeError``.

Dr.Jit 1.5 re-raises any exception thrown while a frozen function records as a
``RuntimeError`` (``record(): error encountered while recording a frozen function``) whose
``__cause__`` is the original, so Dr.Jit programs catch ``RuntimeError`` around frozen calls;
Python code (and a plain call) catches the original class.  frostjit raises one exception that is
both: an instance of a subclass of the original class and of :class:`FrozenCallError` (a
``RuntimeError``), with the original's arguments, attributes, traceback and cause, so
``except KeyError`` and ``except RuntimeError`` both catch it and the traceback reads as the
original's.  ``RuntimeError`` subclasses, and exceptions that are not ``Exception`` s
(``KeyboardInterrupt``), propagate unchanged.
"""
from __future__ import annotations

import threading


class FrozenCallError(RuntimeError):
    """Base of the exceptions a frozen function's Python raised while recording (see the module
    docstring): ``isinstance(e, RuntimeError)`` and ``isinstance(e, <the original class>)``."""


_LOCK = threading.Lock()
_CLASSES: dict = {}      # original class -> its RuntimeError twin (None: cannot be subclassed)


def _twin(cls: type):
    """The subclass of ``cls`` and :class:`FrozenCallError` (named as ``cls``), made once."""
    try:
        return _CLASSES[cls]
    except KeyError:
        pass
    def __reduce__(self):
        # pickled (multiprocessing, concurrent.futures) as the original class: the twin is made
        # at run time and cannot be found by name
        return cls, self.args, (self.__dict__ or None)

    try:
        twin = type(cls.__name__, (cls, FrozenCallError),
                    {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                     "__doc__": cls.__doc__, "__reduce__": __reduce__})
    except TypeError:       # a final class, or an instance layout RuntimeError cannot share
        twin = None
    with _LOCK:
        return _CLASSES.setdefault(cls, twin)


def as_runtime_error(e: BaseException) -> BaseException:
    """``e`` itself if it is already a ``RuntimeError`` (or not an ``Exception``), else an
    equivalent exception that is also a ``RuntimeError`` (see the module docstring).

    Parameters
    ----------
    e : BaseException
        The exception the function raised.

    Examples
    --------
    >>> err = as_runtime_error(KeyError("k"))
    >>> isinstance(err, KeyError), isinstance(err, RuntimeError), err.args
    (True, True, ('k',))
    """
    if isinstance(e, RuntimeError) or not isinstance(e, Exception):
        return e
    twin = _twin(type(e))
    if twin is not None:
        try:
            # __new__ without __init__: the original's constructor may want other arguments
            # than its args (keyword-only parameters); OSError's __new__ parses errno itself.
            new = twin.__new__(twin, *e.args)
            new.args = e.args
            new.__dict__.update(e.__dict__)         # user attributes, __notes__
        except Exception:       # noqa: BLE001 - an unusual constructor: wrap instead
            new = None
        if new is not None:
            new.__cause__ = e.__cause__
            new.__context__ = e.__context__
            new.__suppress_context__ = e.__suppress_context__
            return new.with_traceback(e.__traceback__)
    new = FrozenCallError(f"{type(e).__name__}: {e}")
    new.__cause__ = e
    return new


def call(f, args, kwargs):
    """``f(*args, **kwargs)``, an exception it raises re-raised through :func:`as_runtime_error`
    (a frozen call that runs the plain function: the same exceptions as a recording)."""
    try:
        return f(*args, **kwargs)
    except Exception as e:      # noqa: BLE001 - re-raised as its RuntimeError twin
        err = as_runtime_error(e)
        if err is e:
            raise
    raise err       # (outside the handler: the original is not chained as its context)
