"""The NumPy reference backend: kernel specs interpreted one instruction at a time over whole
arrays (``FROSTJIT_BACKEND=reference`` or ``fj.set_cpu_backend("reference")``).

Slow and simple on purpose: it is the proof that the backend boundary is real (everything
the layers above need goes through :class:`~frostjit.backend.base.Backend`) and the oracle
the LLVM backend is tested against, kernel by kernel.
"""
