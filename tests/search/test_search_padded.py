"""Padded tiling: an output axis whose extent no register tile divides (a prime, 197 tokens
of a ViT) is split by a vector-wide tile that need not divide it, the last tile guarded,
as a sketch beside the usual tiling. Without it a 12 x 197 x 197 batch matmul could only
tile 197 as 1 x 197: no vectors, 0.86x numpy; with it, 1.76x numpy (one thread, 64 trials)."""

from __future__ import annotations

import re

import pytest
from search_helpers import check_numeric
from workloads import FAST_PARAMS, make_task

import ansor_lab as tvm
from ansor_lab import auto_scheduler, te, topi
from ansor_lab.search.sketch import PADDED_ROWS, awkward_axes


def policy_of(tensors, vector_bytes=64):
    task = make_task(tensors, target="llvm -num-cores=1")
    hw = auto_scheduler.HardwareParams(num_cores=1, vector_unit_bytes=vector_bytes)
    task = auto_scheduler.SearchTask(
        compute_dag=task.compute_dag, target=task.target, hardware_params=hw
    )
    return auto_scheduler.SketchPolicy(task, params=dict(FAST_PARAMS), seed=0, verbose=0)


def bmm(tokens=97, depth=16):
    q = te.placeholder((2, tokens, depth), name="q")
    k = te.placeholder((2, tokens, depth), name="k")
    return [q, k, topi.nn.batch_matmul(q, k)]


@pytest.mark.parametrize("vector_bytes", [64, 32])
def test_a_prime_extent_gets_vector_wide_guarded_tiles(vector_bytes):
    lanes = vector_bytes // 4
    policy = policy_of(bmm(), vector_bytes)
    names = [s.describe() for s in policy.sketches]
    assert "T_batch_matmul_NT: tile" in names  # beside the usual tiling
    padded = [s for s in policy.sketches if "tile(padded)" in s.describe()]
    assert len(padded) == 2, names  # and its twin reading k through a transposed pack
    for sk in padded:
        for _ in range(3):
            _, sch = policy.space.sample(sk.index)
            check_numeric(sch, sch.args)
            script = tvm.lower(sch.mod).script()
            # the token axes split by the vector width and by PADDED_ROWS, not dividing
            # 97: the last tiles are guarded, the vector loop is the lanes' width
            assert f"T.vectorized({lanes})" in script, script
            assert re.search(rf"j_0_\d \* {lanes} \+ j_1 < 97", script), script
            assert re.search(rf"\* {PADDED_ROWS} \+ i_1 < 97", script), script


def test_which_axes_are_padded():
    def stage(tensors):
        return make_task(tensors).make_schedule().state.stage(tensors[-1].op.name)

    st = stage(bmm(tokens=197))
    assert awkward_axes(st, 16) == {"i": PADDED_ROWS, "j": 16}
    # 56 = 2 x 28: a vector tile of 28 divides it; 37 is one tile of 37 (two vectors
    # and a masked one: padding to 48 would add 30%); 7 is too short to pad
    assert awkward_axes(stage(bmm(tokens=37)), 16) == {}
    assert awkward_axes(stage(bmm(tokens=56)), 16) == {}
    assert awkward_axes(stage(bmm(tokens=7)), 16) == {}
    # the last axis awkward, the rows not (64 rows: tiles of 4, 8, ... divide them)
    a = te.placeholder((64, 32), name="a")
    b = te.placeholder((32, 251), name="b")
    # (251 pads to 16 tiles of 16 or 8 of 32; 48 would pad it by 15%)
    assert awkward_axes(stage([a, b, topi.nn.matmul(a, b)]), 16) == {"j": (16, 32)}
    # the rows awkward, the last axis not: 197 rows padded by 4, the 2304 outputs tiled
    # as usual (one row of accumulators was all a 197-row tile could hold)
    x = te.placeholder((197, 96), name="x")
    w = te.placeholder((2304, 96), name="w")
    assert awkward_axes(stage([x, w, topi.nn.dense(x, w)]), 16) == {"i": PADDED_ROWS}
    # a well-divided matmul keeps its sketches as they were
    a2 = te.placeholder((64, 32), name="a")
    b2 = te.placeholder((32, 64), name="b")
    assert not any(
        "padded" in s.describe() for s in policy_of([a2, b2, topi.nn.matmul(a2, b2)]).sketches
    )


def test_padded_rows_under_full_vectors_are_right():
    """A dense layer on 131 tokens (prime) with 64 outputs: the rows are split by
    PADDED_ROWS, the last tile's missing rows skipped; the outputs keep their vectors."""
    x = te.placeholder((131, 48), name="x")
    w = te.placeholder((64, 48), name="w")
    policy = policy_of([x, w, topi.nn.dense(x, w)])
    padded = [s for s in policy.sketches if "tile(padded)" in s.describe()]
    assert padded, [s.describe() for s in policy.sketches]
    for sk in padded:
        for _ in range(3):
            _, sch = policy.space.sample(sk.index)
            check_numeric(sch, sch.args)
            script = tvm.lower(sch.mod).script()
            assert re.search(rf"\* {PADDED_ROWS} \+ i_1 < 131", script), script


def test_an_untiled_stage_over_a_prime_row_gets_guarded_vectors():
    """A softmax over rows of 131 (prime): its exp and normalize stages are not tiled,
    and a perfect split of 131 is 131 x 1, a scalar loop (a ViT's 197-wide attention
    softmax ran a scalar exp per element: 0.30x PyTorch). They are split by a sampled
    vector width instead, the last piece guarded; every sample is right."""
    from ansor_lab.search.tiling import GUARDED_VECTORS, awkward  # noqa: PLC0415

    assert awkward(197, 8) and awkward(131, 8) and awkward(2 * 131, 8)
    assert not awkward(196, 8, whole_tiles=False) and not awkward(56, 8) and not awkward(13, 8)
    x = te.placeholder((3, 131), name="x")
    policy = policy_of([x, topi.nn.softmax(x, axis=-1)])
    widths = set()
    for sk in policy.sketches:
        for _ in range(4):
            _, sch = policy.space.sample(sk.index)
            check_numeric(sch, sch.args)
            script = tvm.lower(sch.mod).script()
            for stage in ("T_softmax_exp", "T_softmax_norm"):
                # the stage's own loop is split by a vector width that need not divide 131
                found = re.findall(rf"if \w+ \* (\d+) \+ \w+ < 131:\s+{stage}\[", script)
                assert found, (stage, script)
                widths.update(int(w) for w in found)
    assert widths <= set(GUARDED_VECTORS) and len(widths) > 1


def test_a_padded_vector_tile_may_be_three_registers_wide():
    """127 x 509 x 251 on AVX2: 251 pads to 32 tiles of 8 (no factor 3 among them), 16
    of 16 or 11 of 24 (5% padding); with the rows padded too, the register tile is 4 x the
    width: 4 x 24 (12 accumulators) ran at 579 us, 4 x 16 at 633. Every width is drawn,
    and every sample is right; a width wider than one register that pads more than
    ``PADDED_WASTE`` of the axis is not offered."""
    from ansor_lab.search.tiling import PADDED_WASTE, _vector_pads  # noqa: PLC0415

    a = te.placeholder((127, 509), name="a")
    b = te.placeholder((509, 251), name="b")
    st = make_task([a, b, topi.nn.matmul(a, b)]).make_schedule().state.stage("T_matmul_NN")
    assert awkward_axes(st, 8) == {"i": PADDED_ROWS, "j": (8, 16, 24)}
    assert _vector_pads(97, 8) == 8 and (112 - 97) / 97 > PADDED_WASTE  # 16 and 24: 15%+
    assert _vector_pads(197, 16) == 16
    a2 = te.placeholder((13, 40), name="a")
    b2 = te.placeholder((40, 251), name="b")
    policy = policy_of([a2, b2, topi.nn.matmul(a2, b2)], vector_bytes=32)
    padded = [s for s in policy.sketches if "tile(padded)" in s.describe()]
    widths: set = set()
    for k in range(40):
        _, sch = policy.space.sample(padded[k % len(padded)].index)
        script = tvm.lower(sch.mod).script()
        (width,) = {int(w) for w in re.findall(r"j_0_\d \* (\d+) \+ j_1 < 251", script)}
        if width not in widths:
            check_numeric(sch, sch.args)
            widths.add(width)
        if len(widths) == 3:
            break
    assert widths == {8, 16, 24}, widths


def test_an_axis_whose_tiles_are_no_whole_registers_is_padded_where_padding_is_cheap():
    """CLIP's 77 tokens (7 x 11) tile by 11 on AVX2: one register and a 3-lane rest per
    tile. Padded to 80 they are ten full registers (4% more lanes); 28 (14 divides it)
    would add 14% and is tiled as before, 56 has 8."""
    from ansor_lab.search.tiling import awkward  # noqa: PLC0415

    assert awkward(77, 8) and awkward(77, 16) and awkward(100, 8) and awkward(196, 8)
    assert not awkward(28, 8) and not awkward(56, 8) and not awkward(48, 16)
    assert not awkward(28, 4) and not awkward(12, 4)
    assert awkward(77, PADDED_ROWS) and awkward(37, PADDED_ROWS)
    assert not awkward(77, PADDED_ROWS, whole_tiles=False)

    def stage(tensors):
        return make_task(tensors).make_schedule().state.stage(tensors[-1].op.name)

    assert awkward_axes(stage(bmm(tokens=77)), 8) == {"i": PADDED_ROWS, "j": (8, 16)}
    # AVX-512: one 16-lane register is the widest padded tile (32 would add 25%), so 4
    # padded rows would hold 4 accumulators; the rows keep their tiles of 7 and 11
    assert awkward_axes(stage(bmm(tokens=77)), 16) == {"j": 16}
    assert awkward_axes(stage(bmm(tokens=56)), 8) == {}
