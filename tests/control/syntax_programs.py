"""Functions for the @fj.syntax tests, kept undecorated: the tests run each as plain Python on
Python ints (the reference, lane by lane) and rewritten by fj.syntax on JIT arrays."""
from __future__ import annotations


def collatz(x, limit):
    n = x * 0
    while (x != 1) & (n < limit):
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        n += 1
    return n, x


def nested_loops(a, b):
    total = a * 0
    i = a * 0
    while i < a:
        j = i * 0
        while j < b:
            if (i + j) % 3 == 0:
                total += i * j + 1
            elif (i + j) % 3 == 1:
                total += 2
            j += 1
        i += 1
    return total


def branch_defines_new_names(x):
    if x > 5:
        y = x - 5
        only_here = 1  # noqa: F841  (bound in one branch only: not a result of the if)
    else:
        y = x + 5
    return y


def range_sum(n):
    s = n * 0
    for k in range(n):
        s += k * k
    return s


def range_with_step(lo, hi):
    s = lo * 0
    for k in range(lo, hi, 2):
        s += k
    return s


def python_loop_inside(x):
    # a Python for loop over a Python range, with rewritten statements inside
    for r in range(3):
        if x > r:
            x = x + r
    return x


def body_local_name(x):
    while x < 3:
        tmp = x
        x += 1
    return tmp          # local to the loop body: NameError, as in Dr.Jit


def with_break(x):
    while x < 10:
        x += 1
        if x > 5:
            break
    return x
