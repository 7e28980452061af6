"""Structural hashing of expressions: cached per node, never carried across a pickle."""

from __future__ import annotations

import dataclasses
import pickle

from ansor_lab.dsl import expr as E


def test_equal_expressions_hash_equal_and_the_hash_is_kept_on_the_node():
    x = E.Var("x")
    a, b = (x + 1) * 3, (x + 1) * 3
    assert a is not b and E.structural_equal(a, b) and hash(a) == hash(b)
    assert a._structural_hash == hash(a)
    assert len({a, b, (x + 2) * 3}) == 2
    assert "_structural_hash" not in [f.name for f in dataclasses.fields(a)]


def test_a_pickled_expression_hashes_afresh():
    # the hash depends on the identity of its variables, which a new process changes
    x = E.Var("x")
    e = (x + 1) * 3
    hash(e)
    copy = pickle.loads(pickle.dumps(e))
    assert not hasattr(copy, "_structural_hash")
    rebuilt = E.Mul(E.Add(copy.a.a, E.IntImm(1), "int32"), E.IntImm(3), "int32")
    assert E.structural_equal(copy, rebuilt) and hash(copy) == hash(rebuilt)
    assert hash(copy) != hash(e)  # another variable x: a different expression
    assert not E.structural_equal(copy, e)


def test_replace_makes_a_node_with_its_own_hash():
    x = E.Var("x")
    e = x + 1
    hash(e)
    f = dataclasses.replace(e, b=E.IntImm(2, "int32"))
    assert hash(f) == hash(x + 2) and hash(f) != hash(e)
