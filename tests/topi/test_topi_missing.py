"""TVM topi names ansor_lab does not provide stop with our error, naming what to write."""

from __future__ import annotations

import pytest

from ansor_lab import topi
from ansor_lab.errors import MissingOperatorError, OutOfScopeError


@pytest.mark.parametrize(
    "module,name",
    [(topi.nn, "deformable_conv2d_nchw"), (topi.nn, "sparse_dense"), (topi, "sparse")],
)
def test_a_missing_operator_says_what_to_write_and_what_exists(module, name):
    with pytest.raises(MissingOperatorError) as err:
        getattr(module, name)
    msg = str(err.value)
    assert f"{module.__name__.replace('ansor_lab.', '')}.{name} is not provided" in msg
    assert "te.compute" in msg and "te.reduce_axis" in msg
    assert ("conv2d" if module is topi.nn else "argmax") in msg  # what the module provides
    assert isinstance(err.value, AttributeError) and isinstance(err.value, OutOfScopeError)
    assert not hasattr(module, name)  # hasattr stays False


def test_dunder_probes_get_a_plain_attribute_error():
    with pytest.raises(AttributeError) as err:
        topi.nn.__wrapped__  # noqa: B018 - what inspect and doctest probe
    assert not isinstance(err.value, MissingOperatorError)


def test_the_per_target_namespaces_still_answer():
    assert topi.cuda is not None and topi.x86 is not None
