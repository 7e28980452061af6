"""TVM's "Writing a Customized Pass" tutorial (how_to/extend_tvm), as written: a pass of
the user's own found with stmt_functor.post_order_visit, applied with ir_transform,
wrapped by tir.transform.prim_func_pass and put into the lowering with PassContext's
"tir.add_lower_pass". Added to the text: the lowered loop is split and vectorized by the
pass, and the module built under the same context equals numpy.
"""

import tvm
from tvm import te
import numpy as np

n = tvm.tir.const(128, "int32")
a = te.placeholder((n,), name="a")
b = te.placeholder((n,), name="b")
c = te.compute((n,), lambda i: a[i] + b[i], name="c")

sch = te.create_schedule(c.op)
ir = tvm.lower(sch, [a, b, c])
print(ir)

loops = []


def find_width8(op):
    """Find all the 'tir.For' nodes whose extent can be divided by 8."""
    if isinstance(op, tvm.tir.For):
        if isinstance(op.extent, tvm.tir.IntImm):
            if op.extent.value % 8 == 0:
                loops.append(op)


def vectorize8(op):
    """Split can vectorize the loops found in `find_width8`."""
    if op in loops:
        extent = op.extent.value
        name = op.loop_var.name
        lo, li = te.var(name + ".outer"), te.var(name + ".inner")
        body = tvm.tir.stmt_functor.substitute(op.body, {op.loop_var: lo * 8 + li})
        body = tvm.tir.For(li, 0, 8, tvm.tir.ForKind.VECTORIZED, body)
        body = tvm.tir.For(lo, 0, extent // 8, tvm.tir.ForKind.SERIAL, body)
        return body
    return None


@tvm.tir.transform.prim_func_pass(opt_level=0)
def vectorize(f, mod, ctx):
    global loops

    tvm.tir.stmt_functor.post_order_visit(f.body, find_width8)

    if not loops:
        return f

    # The last list arugment indicates what kinds of nodes will be transformed.
    # Thus, in this case only `For` nodes will call `vectorize8`
    return f.with_body(tvm.tir.stmt_functor.ir_transform(f.body, None, vectorize8, ["tir.For"]))


with tvm.transform.PassContext(config={"tir.add_lower_pass": [(1, vectorize)]}):
    print(tvm.lower(sch, [a, b, c]))

# -- added: what the pass did, and the built function -------------------------------------
with tvm.transform.PassContext(config={"tir.add_lower_pass": [(1, vectorize)]}):
    text = str(tvm.lower(sch, [a, b, c]))
    f = tvm.build(sch, [a, b, c])
assert "T.vectorized(8)" in text and "range(16)" in text, text
assert "vectorized" not in str(ir)
assert "T.Ramp(" in f.get_source("tir")  # built as 8-lane vectors
x, y = np.random.rand(128).astype("float32"), np.random.rand(128).astype("float32")
z = tvm.nd.empty((128,), "float32")
f(tvm.nd.array(x), tvm.nd.array(y), z)
np.testing.assert_allclose(z.numpy(), x + y, rtol=1e-6)
print("the pass vectorized the loop by 8; the result equals numpy")
