"""Vector erf and tanh for float32: polynomials where LLVM would call libm once per lane.

libm has no vector ``erff`` or ``tanhf``: a GELU vectorized over 16 lanes would make 16
scalar calls per vector and run at a few percent of the memory bandwidth. These evaluate
every lane at once, in float32 with fused multiply-adds (``contract``), branch-free
(each range computed and picked by ``select``):

* **erf** (within 1 ulp of the correctly rounded result over the whole float32 range,
  ``tests/codegen/test_vector_special.py``): for ``|x| < 0.921875`` ``erf(x) = x + x *
  Q(x^2)``, Q of degree 6 (the final multiply-add rounds once, so the result is within
  an ulp); for ``0.921875 <= |x| < 2`` and ``2 <= |x| < 3.92`` ``erf(x) = 1 - erfc(|x|)``
  with ``erfc`` a degree-10 polynomial in ``|x| - c`` around each interval's centre
  (``|x| - c`` is exact by Sterbenz's lemma, and ``erfc`` is small, so its error is far
  below an ulp of the result; one Horner pass serves both intervals, each lane's
  coefficients picked by ``select``); past 3.92 float32's erf is 1. The sign is copied back,
  NaN stays NaN, ``erf(+-inf) = +-1``, ``erf(-0) = -0``. The coefficients are least-
  squares fits on Chebyshev nodes against ``math.erf``/``math.erfc`` (float64), rounded
  to float32.
* **tanh**: Cephes' ``tanhf``: ``x + x^3 P(x^2)`` for ``|x| < 0.625``, else
  ``1 - 2 / (exp(2|x|) + 1)`` with the vector exp, 1 past 9.02; sign copied back.
"""

from __future__ import annotations

from llvmlite import ir

#: erf(x) / x - 1 as a polynomial in x^2 on [0, 0.921875] (highest degree first)
ERF_SMALL = (
    8.438703662250191e-05,
    -0.0008160769357345998,
    0.005202834494411945,
    -0.02686024084687233,
    0.11283713579177856,
    -0.37612634897232056,
    0.12837916612625122,
)
ERF_SMALL_END = 0.921875
#: erfc(a) as a polynomial in a - centre on [0.921875, 2) and [2, 3.92)
ERFC_MID_CENTRE = 1.4609375
ERFC_MID = (
    -7.553520845249295e-05,
    -0.0015037728007882833,
    0.0029837735928595066,
    0.0038474085740745068,
    -0.02051595039665699,
    0.019547387957572937,
    0.04124361649155617,
    -0.1454707384109497,
    0.19505420327186584,
    -0.13351303339004517,
    0.03882114961743355,
)
ERFC_TAIL_START = 2.0
ERFC_TAIL_CENTRE = 2.96
ERFC_TAIL = (
    -2.6079564122483134e-05,
    2.182421667384915e-05,
    0.00014325139636639506,
    -0.000459756440250203,
    0.0008514634100720286,
    -0.001197241130284965,
    0.00126673374325037,
    -0.0009750834433361888,
    0.0005231259274296463,
    -0.00017666762869339436,
    2.8382704840623774e-05,
)
#: float32 erf rounds to 1 from here on (erfc(3.92) < half an ulp below 1)
ERF_ONE = 3.92
#: Cephes tanhf: tanh(x) = x + x^3 P(x^2) for |x| < 0.625
TANH_SMALL = (
    -5.70498872745e-3,
    2.06390887954e-2,
    -5.37397155531e-2,
    1.33314422036e-1,
    -3.33332819422e-1,
)
TANH_SMALL_END = 0.625
TANH_ONE = 9.02

_FLAGS = ("contract",)  # fused multiply-adds, never reassociation


class VectorSpecial:
    """Builder methods (a mixin of the LLVM function builder, next to ``VectorMath``)."""

    def _horner(self, coeffs: tuple, t: ir.Value) -> ir.Value:
        b = self.b
        p = self.const(t.type, coeffs[0])
        for c in coeffs[1:]:
            p = b.fadd(b.fmul(p, t, flags=_FLAGS), self.const(t.type, c), flags=_FLAGS)
        return p

    def _fabs_sign(self, x: ir.Value, lanes: int) -> tuple:
        fabs = self.intrinsic("llvm.fabs", "float32", 1, lanes)
        copysign = self.intrinsic("llvm.copysign", "float32", 2, lanes)
        return self.b.call(fabs, [x]), copysign

    def _vector_erf(self, x: ir.Value, lanes: int) -> ir.Value:
        """erf of a float32 vector (see the module docstring)."""
        b, ft = self.b, x.type

        def k(v):
            return self.const(ft, v)

        a, copysign = self._fabs_sign(x, lanes)
        q = self._horner(ERF_SMALL, b.fmul(a, a, flags=_FLAGS))
        small = b.fadd(b.fmul(a, q, flags=_FLAGS), a, flags=_FLAGS)
        # one Horner pass over the lane's own interval: each coefficient (and the centre)
        # picked per lane, the same operations as two passes and a pick, bit for bit,
        # with blends (which the adder ports take) in place of ten multiply-adds
        in_mid = b.fcmp_ordered("<", a, k(ERFC_TAIL_START))

        def pick(mid_value: float, tail_value: float) -> ir.Value:
            return b.select(in_mid, k(mid_value), k(tail_value))

        t = b.fsub(a, pick(ERFC_MID_CENTRE, ERFC_TAIL_CENTRE))
        erfc = pick(ERFC_MID[0], ERFC_TAIL[0])
        for cm, ct in zip(ERFC_MID[1:], ERFC_TAIL[1:]):
            erfc = b.fadd(b.fmul(erfc, t, flags=_FLAGS), pick(cm, ct), flags=_FLAGS)
        y = b.select(b.fcmp_ordered("<", a, k(ERF_SMALL_END)), small, b.fsub(k(1.0), erfc))
        y = b.select(b.fcmp_ordered(">=", a, k(ERF_ONE)), k(1.0), y)
        y = b.call(copysign, [y, x])
        return b.select(b.fcmp_unordered("uno", x, x), x, y)

    def _vector_tanh(self, x: ir.Value, lanes: int) -> ir.Value:
        """tanh of a float32 vector (see the module docstring)."""
        b, ft = self.b, x.type

        def k(v):
            return self.const(ft, v)

        a, copysign = self._fabs_sign(x, lanes)
        z = b.fmul(a, a, flags=_FLAGS)
        p = self._horner(TANH_SMALL, z)
        small = b.fadd(b.fmul(b.fmul(p, z, flags=_FLAGS), a, flags=_FLAGS), a, flags=_FLAGS)
        # clamp before exp so a large |x| gives exp(18.04) (finite), not inf
        ac = b.select(b.fcmp_ordered("<", a, k(TANH_ONE)), a, k(TANH_ONE))
        e = self._exp(b.fmul(ac, k(2.0)), "float32", lanes)
        big = b.fsub(k(1.0), b.fdiv(k(2.0), b.fadd(e, k(1.0))))
        y = b.select(b.fcmp_ordered("<", a, k(TANH_SMALL_END)), small, big)
        y = b.select(b.fcmp_ordered(">=", a, k(TANH_ONE)), k(1.0), y)
        y = b.call(copysign, [y, x])
        return b.select(b.fcmp_unordered("uno", x, x), x, y)
