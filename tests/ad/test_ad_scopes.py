"""suspend_grad / resume_grad / isolate_grad, nested, with and without variables (Dr.Jit 1.5's model).

Each scope starts from its parent's state: either "every variable except a set" or "only a set".
A variable created inside an "only a set" scope joins that set until the scope ends; inside
``suspend_grad()`` with nothing resumed no variable can become differentiable.  The expected
values were measured with Dr.Jit 1.5 side by side.
"""
import threading

import pytest

import frostjit as fj
from frostjit.llvm.ad import Float

ge = fj.grad_enabled


def leaf(*values):
    x = Float(*(values or (1.0, 2.0)))
    fj.enable_grad(x)
    return x


def test_enable_grad_inside_resume_of_suspend_stays_enabled():
    # issue 8 item 18
    a, b = leaf(), leaf()
    with fj.suspend_grad():
        with fj.resume_grad(a):
            d = Float(3.0)
            fj.enable_grad(d)
            y, w, v = a * 2, b * 2, d * 2
            u = y * 3
            assert (ge(a), ge(b), ge(d), ge(y), ge(w), ge(v), ge(u)) == (True, False, True, True, False, True, True)
        assert not (ge(a) or ge(d) or ge(y) or ge(u))      # back in suspend_grad(): only the resumed set
        q, p = y * 2, d * 2
    assert ge(d) and ge(y) and not ge(q) and not ge(p)


def test_enable_grad_inside_plain_suspend_does_nothing():
    a = leaf()
    with fj.suspend_grad():
        d = Float(3.0)
        fj.enable_grad(d)
        assert not ge(d) and not ge(a) and not ge(a * 2)
    assert not ge(d) and ge(a)


def test_suspend_of_variables_inside_resume_of_suspend():
    a = leaf()
    with fj.suspend_grad():
        with fj.resume_grad(a):
            d = Float(1.0)
            fj.enable_grad(d)
            with fj.suspend_grad(d):
                e = Float(1.0)
                fj.enable_grad(e)
                assert (ge(d), ge(e), ge(a * 2), ge(a)) == (False, True, True, True)
            with fj.suspend_grad(a):
                f = Float(1.0)
                fj.enable_grad(f)           # the enabled set is {d}: new variables may still join
                assert (ge(a), ge(d), ge(f)) == (False, True, True)
            with fj.suspend_grad():
                assert not ge(d) and not ge(a)
            with fj.resume_grad():
                g = leaf()
                assert ge(d) and ge(a) and ge(g)
            assert not ge(g)
        assert not ge(g)
    assert ge(g) and ge(e)


def test_suspend_of_variables_then_nested_scopes():
    a, b = leaf(), leaf()
    with fj.suspend_grad(a):
        d = Float(3.0)
        fj.enable_grad(d)
        assert (ge(a), ge(b), ge(d), ge(a * 2), ge(b * 2), ge(a * b)) == (False, True, True, False, True, True)
        with fj.resume_grad():
            assert ge(a) and ge(b) and ge(a * 2)
        with fj.resume_grad(a):
            assert ge(a) and ge(b)
        with fj.suspend_grad():
            assert not (ge(a) or ge(b) or ge(d))
            with fj.resume_grad(b):
                assert (ge(a), ge(b), ge(d)) == (False, True, False)
    assert ge(a) and ge(b)


def test_scope_arguments_that_are_not_grad_enabled_are_ignored():
    a = leaf()
    with fj.suspend_grad(Float(1.0)):
        assert ge(a)
    with fj.suspend_grad(1.0):
        assert ge(a)
    with fj.suspend_grad([a]):
        assert not ge(a)
    with fj.suspend_grad({"x": a}):
        assert not ge(a)


def test_when_false_scopes_change_nothing():
    a = leaf()
    with fj.suspend_grad(when=False):
        assert ge(a)
    with fj.suspend_grad():
        with fj.resume_grad(when=False):
            assert not ge(a)


def test_isolate_grad_copies_the_enable_state_and_forgets_variables_created_inside():
    a = leaf()
    with fj.suspend_grad():
        with fj.resume_grad(a):
            with fj.isolate_grad():
                y = a * 2
                assert ge(y)
            assert not ge(y)
    with fj.suspend_grad():
        with fj.isolate_grad():
            d = Float(1.0)
            fj.enable_grad(d)
            assert not ge(a) and not ge(d)
    with fj.isolate_grad():
        with fj.suspend_grad():
            assert not ge(a)
        assert ge(a) and ge(a * 2)


def test_gradients_of_suspended_variables_read_as_zero_and_cannot_be_set():
    a = leaf()
    fj.set_grad(a, 7.0)
    with fj.suspend_grad():
        assert fj.grad(a).numpy().tolist() == [0, 0]
        fj.set_grad(a, 5.0)
        fj.accum_grad(a, 5.0)
    assert fj.grad(a).numpy().tolist() == [7, 7]
    with fj.suspend_grad(a):
        fj.clear_grad(a)           # clearing works everywhere
    assert fj.grad(a).numpy().tolist() == [0, 0]


def test_backward_inside_suspend_of_a_variable_still_reaches_it():
    a, b = leaf(), leaf()
    y = a * b
    with fj.suspend_grad(b):
        fj.backward(y)
    assert fj.grad(a).numpy().tolist() == [1, 2] and fj.grad(b).numpy().tolist() == [1, 2]
    a, b = leaf(), leaf()
    y = a * b
    with fj.suspend_grad():
        with fj.resume_grad(a):
            with pytest.raises(RuntimeError):
                fj.backward(y)           # y itself is suspended here
        with fj.resume_grad(a, y):
            fj.backward(y)
    assert fj.grad(a).numpy().tolist() == [1, 2]


def test_enqueue_ignores_suspend_scopes():
    a, b = leaf(), leaf()
    y = a * b
    with fj.suspend_grad():
        fj.enqueue(fj.ADMode.Backward, y)
    fj.set_grad(y, 1.0)
    with fj.suspend_grad():
        fj.traverse(fj.ADMode.Backward)
    assert fj.grad(a).numpy().tolist() == [1, 2] and fj.grad(b).numpy().tolist() == [1, 2]


def test_replace_grad_inside_resume_of_suspend_is_enabled():
    a, b = leaf(), leaf()
    with fj.suspend_grad():
        with fj.resume_grad(a):
            assert ge(fj.replace_grad(b, a))


def test_forward_to_twice_inside_isolate_grad_keeps_the_outer_gradient():
    # issue 8 item 19
    a = leaf(1.0)
    with fj.isolate_grad():
        fj.set_grad(a, 2.0)
        assert fj.forward_to(a * 2).numpy().tolist() == [4]
        assert fj.grad(a).numpy().tolist() == [2]
        assert fj.forward_to(a * 3).numpy().tolist() == [6]
    assert fj.grad(a).numpy().tolist() == [2]
    a = leaf(1.0)                      # without the scope, ClearInput clears it
    fj.set_grad(a, 2.0)
    assert fj.forward_to(a * 2).numpy().tolist() == [4]
    assert fj.forward_to(a * 3).numpy().tolist() == [0]


def test_forward_into_a_variable_created_before_isolate_grad_raises():
    a = leaf(1.0)
    y = a * 2
    with fj.isolate_grad():
        fj.set_grad(a, 2.0)
        with pytest.raises(RuntimeError, match="isolate_grad"):
            fj.forward_to(y)
    assert fj.grad(a).numpy().tolist() == [2]


def test_backward_to_twice_inside_isolate_grad_accumulates():
    a = leaf(1.0)
    with fj.isolate_grad():
        y = a * 2
        fj.set_grad(y, 2.0)
        assert fj.backward_to(a).numpy().tolist() == [4]
        z = a * 3
        fj.set_grad(z, 1.0)
        assert fj.backward_to(a).numpy().tolist() == [7]
    assert fj.grad(a).numpy().tolist() == [7]


def test_scopes_and_the_traversal_queue_are_per_thread():

    x = leaf(1.0)
    inside, done = threading.Event(), threading.Event()

    def suspended():
        with fj.suspend_grad():
            inside.set()
            done.wait(10)

    t = threading.Thread(target=suspended)
    t.start()
    inside.wait(10)
    try:
        assert ge(x) and ge(x * 2)          # another thread's suspend_grad does not apply here
    finally:
        done.set()
        t.join()
    seen = {}

    def fresh():
        seen["outside"] = ge(x)
        with fj.suspend_grad():
            seen["inside"] = ge(x)

    with fj.suspend_grad():
        t = threading.Thread(target=fresh)
        t.start()
        t.join()
    assert seen == {"outside": True, "inside": False}
    y = x * 3
    fj.set_grad(y, 1.0)
    t = threading.Thread(target=lambda: fj.enqueue(fj.ADMode.Backward, y))
    t.start()
    t.join()
    fj.traverse(fj.ADMode.Backward)          # nothing was enqueued in this thread
    assert fj.grad(x).numpy().tolist() == [0]


def test_the_count_of_open_scopes_returns_to_zero():
    # The hot paths skip the per-thread scope lists while graph.open_scopes is 0, so every way a
    # scope closes (normally, by an exception, out of order, a frozen call's recording) must
    # count it off, and none may be counted off twice.
    from frostjit.ad import graph
    start = graph.open_scopes
    x = leaf(1.0)
    with pytest.raises(ValueError):
        with fj.suspend_grad(), fj.isolate_grad(), fj.resume_grad(x):
            assert graph.open_scopes == start + 4       # (isolate_grad opens two)
            raise ValueError
    assert graph.open_scopes == start
    outer, inner = fj.resume_grad(), fj.suspend_grad()
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)        # out of order: the outer one closes first
    assert graph.open_scopes == start + 1 and not ge(x * 1)
    inner.__exit__(None, None, None)
    assert graph.open_scopes == start and ge(x * 1)
    f = fj.freeze(lambda a: a * 2)
    for _ in range(3):                      # records (an isolation scope), then replays
        fj.backward(f(x))
    assert graph.open_scopes == start and fj.grad(x).numpy().tolist() == [6]     # (accumulated)


def test_a_scope_open_in_another_thread_leaves_this_threads_own_scopes_working():
    # graph.open_scopes > 0 because of the other thread: this thread reads its own lists again
    from frostjit.ad import graph
    inside, done = threading.Event(), threading.Event()

    def hold():
        with fj.suspend_grad():
            inside.set()
            done.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    inside.wait(10)
    try:
        assert graph.open_scopes >= 1
        x = leaf(2.0)
        with fj.suspend_grad():
            assert not ge(x * 2)
        with fj.suspend_grad(x):
            y = x * x
        assert not ge(y)
        z = x * 3
        fj.backward(z)
        assert fj.grad(x).numpy().tolist() == [3]
    finally:
        done.set()
        t.join()
