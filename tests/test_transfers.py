"""A phase moves O(rows) bytes between the host and the compute device, not O(rows x
partitions): counted on any machine by aflite._internal.transfer (on a CPU the count is what a
GPU run would move)."""

from __future__ import annotations

import numpy as np
import pytest

import aflite
from aflite._internal.transfer import counting, to_device, to_host


def _moves(model, m, partitions="blocks"):
    rng = np.random.default_rng(0)
    n, d = 6000, 32
    y = rng.integers(0, 3, n)
    x = (rng.normal(size=(n, d)) + 0.5 * np.eye(3, d)[y]).astype(np.float32)
    with counting() as moves:
        res = aflite.filter(
            x,
            y,
            target_size=4800,
            slice_size=600,
            n_partitions=m,
            train_size=600,
            model=model,
            partitions=partitions,
            threshold=0.0,
            progress=False,
            score_kept=False,
            seed=0,
        )
    assert len(res.history) == 2
    return moves, x.nbytes, n


@pytest.mark.parametrize("model", ["linear", "ridge"])
def test_a_phase_moves_o_of_rows_bytes_whatever_the_number_of_partitions(model):
    few, features, n = _moves(model, 16)
    many, _, _ = _moves(model, 128)
    per_phase_row = lambda b: b / 2 / n  # noqa: E731
    # back: each row's counts (the (rows x P) masks used to come back: 128+ bytes)
    assert per_phase_row(many.down_bytes) <= 24
    assert many.down_bytes == few.down_bytes
    # up: the features once, then each phase's positions and block design: O(rows) and the
    # blocks x partitions incidence (a byte an entry; up to 320 blocks here)
    assert features <= many.up_bytes
    incidence = 320 * 128 / n
    assert per_phase_row(many.up_bytes - features) <= 24 + incidence
    assert many.up_bytes - few.up_bytes <= 2 * 320 * (128 - 16)  # the incidence only
    # a stated number of moves (each one a synchronisation on a GPU); the exact family's
    # kept blocks also take up the rows that left them, once a phase after the first
    extra = 1 if model == "ridge" else 0
    assert many.down_calls <= 2 * 5 and many.up_calls <= 2 + 2 * 4 + extra


def test_uniform_parts_send_their_masks_at_a_byte_an_entry():
    moves, features, n = _moves("linear", 64, "uniform")
    assert (moves.up_bytes - features) / 2 <= n * (64 + 16)


def test_the_counters_count_what_crosses_and_nest():
    import torch

    with counting() as outer:
        t = to_device(np.zeros(10, dtype=np.float32), torch.device("cpu"))
        with counting() as inner:
            to_host(t)
    assert (outer.up_bytes, outer.up_calls, outer.down_bytes, outer.down_calls) == (40, 1, 40, 1)
    assert (inner.up_calls, inner.down_bytes) == (0, 40)
