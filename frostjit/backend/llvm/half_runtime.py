"""Half-precision conversions for CPUs without F16C, defined in LLVM IR and registered with the JIT.

Without the F16C instructions (x86 CPUs before 2012, or ``FROSTJIT_TARGET_FEATURES=-avx``/``-f16c``),
LLVM lowers ``fpext half`` / ``fptrunc ... to half`` to calls of compiler-runtime functions
(``__extendhfsf2``, ``__truncsfhf2``, ``__truncdfhf2``) that a Python process does not provide: a
``Float16`` kernel then jumped to an unresolved address and crashed.  This module defines them in
IR (bit manipulation only, so their own code needs no such call; the calling convention is LLVM's
own, whatever its ABI for ``half``), compiles them once and registers their addresses with
``llvm.add_symbol``.  Conversions are exact: half to float is exact; float to half rounds to
nearest even (Giesen's branch-free method); double to half rounds to odd in float first, so the
final rounding is correct (no double rounding).  NaNs keep their sign and become the quiet NaN
``0x7e00`` (the hardware keeps the payload's top bits).
"""
from __future__ import annotations

import llvmlite.binding as llvm

SYMBOLS = ("__extendhfsf2", "__truncsfhf2", "__truncdfhf2")

IR = r"""
define float @__extendhfsf2(half %h) {
  %b = bitcast half %h to i16
  %w = zext i16 %b to i32
  %m = and i32 %w, 32767
  %u0 = shl i32 %m, 13
  %e = and i32 %u0, 260046848
  %u1 = add i32 %u0, 939524096
  %special = icmp eq i32 %e, 260046848
  %u_special = add i32 %u1, 939524096
  %small = icmp eq i32 %e, 0
  %u_small = add i32 %u1, 8388608
  %f_small = bitcast i32 %u_small to float
  %f_norm = fsub float %f_small, 0x3F10000000000000
  %u_norm = bitcast float %f_norm to i32
  %u2 = select i1 %special, i32 %u_special, i32 %u1
  %u3 = select i1 %small, i32 %u_norm, i32 %u2
  %s = and i32 %w, 32768
  %s2 = shl i32 %s, 16
  %u4 = or i32 %u3, %s2
  %r = bitcast i32 %u4 to float
  ret float %r
}

define internal i16 @fj_float_bits_to_half(i32 %bits) alwaysinline {
  %sign = and i32 %bits, -2147483648
  %u = xor i32 %bits, %sign
  %big = icmp uge i32 %u, 1199570944
  %nan = icmp ugt i32 %u, 2139095040
  %o_big = select i1 %nan, i32 32256, i32 31744
  %tiny = icmp ult i32 %u, 947912704
  %f = bitcast i32 %u to float
  %f_t = fadd float %f, 0x3FE0000000000000
  %u_t = bitcast float %f_t to i32
  %o_tiny = sub i32 %u_t, 1056964608
  %odd0 = lshr i32 %u, 13
  %odd = and i32 %odd0, 1
  %u_n0 = add i32 %u, -939520001
  %u_n1 = add i32 %u_n0, %odd
  %o_norm = lshr i32 %u_n1, 13
  %o1 = select i1 %tiny, i32 %o_tiny, i32 %o_norm
  %o2 = select i1 %big, i32 %o_big, i32 %o1
  %s16 = lshr i32 %sign, 16
  %o3 = or i32 %o2, %s16
  %r = trunc i32 %o3 to i16
  ret i16 %r
}

define half @__truncsfhf2(float %f) {
  %bits = bitcast float %f to i32
  %r = call i16 @fj_float_bits_to_half(i32 %bits)
  %h = bitcast i16 %r to half
  ret half %h
}

define half @__truncdfhf2(double %d) {
  %f = fptrunc double %d to float
  %back = fpext float %f to double
  %inexact = fcmp one double %back, %d
  %ab = call double @llvm.fabs.f64(double %back)
  %ad = call double @llvm.fabs.f64(double %d)
  %over = fcmp ogt double %ab, %ad
  %u = bitcast float %f to i32
  %down = and i1 %inexact, %over
  %u_1 = add i32 %u, -1
  %u1 = select i1 %down, i32 %u_1, i32 %u
  %u_odd = or i32 %u1, 1
  %u2 = select i1 %inexact, i32 %u_odd, i32 %u1
  %r = call i16 @fj_float_bits_to_half(i32 %u2)
  %h = bitcast i16 %r to half
  ret half %h
}

declare double @llvm.fabs.f64(double)
"""

_engines: list = []     # keeps the registered code alive for the process


def needed(features: set) -> bool:
    """Whether code generated for ``features`` (the target's enabled features) calls the runtime."""
    return "f16c" not in features or "avx" not in features      # (F16C needs AVX: LLVM drops it)


def install(target_machine) -> None:
    """Compile the conversions for ``target_machine`` and register them (once per process)."""
    if _engines:
        return
    mod = llvm.parse_assembly(IR)
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, target_machine)
    engine.finalize_object()
    for name in SYMBOLS:
        llvm.add_symbol(name, engine.get_function_address(name))
    _engines.append(engine)
