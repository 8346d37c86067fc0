"""Traffic matrices of all-to-all-v collectives and patterns of background flows.

A :class:`TrafficMatrix` says how much rank ``i`` sends to rank ``j`` *relative to*
the others: its weights ``w[i, j] ≥ 0`` (the diagonal is data a rank keeps). An
``alltoallv`` of ``size_bytes`` per rank moves ``bytes(nranks, size_bytes)``:
``n · size_bytes`` bytes in all, shared out in proportion to the weights, in whole
bytes. Kinds:

``uniform``
    every pair alike: exactly the blocks of ``alltoall`` (:func:`simnet.schedule.split_bytes`
    of ``size_bytes`` into ``n``);
``zipf``
    mixture-of-experts skew: every rank sends to rank ``j`` in proportion to
    ``1 / k_j^s``, ``k_j`` the popularity rank (1 = most popular) of ``j`` in a
    seeded random order, ``s`` the `exponent`;
``hotspot``
    every rank sends `fraction` of its data, evenly, to `hotspots` hot ranks drawn
    with the seed, and the rest evenly to the others;
``explicit``
    an ``n × n`` array given in a scenario (YAML list of lists, or a ``.npy`` file).

Background flows follow a *pattern* (:data:`PATTERNS`): ``permutation`` (every rank
sends to one other and receives from one other, a seeded random cyclic
permutation, the same for every burst) or ``random`` (every rank sends to a rank
drawn uniformly among the others, redrawn for every burst).

All randomness comes from :func:`numpy.random.default_rng` with the given seed, so
a matrix or a pattern is the same in every run and every process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from simnet.errors import SimnetError

__all__ = ["MATRICES", "PATTERNS", "TrafficMatrix", "round_shares", "cyclic_permutation", "pattern_targets"]

MATRICES = ("uniform", "zipf", "hotspot", "explicit")
"""Kinds of :class:`TrafficMatrix`."""

PATTERNS = ("permutation", "random")
"""Patterns of background flows (see :func:`pattern_targets`)."""


def round_shares(total: int, weights: np.ndarray) -> np.ndarray:
    """Split `total` whole bytes in proportion to `weights` (largest remainder; ties to the lower index).

    Parameters
    ----------
    total : int
        Bytes to share out, ≥ 0.
    weights : numpy.ndarray
        Non-negative weights, not all zero.

    Returns
    -------
    numpy.ndarray of int64
        Shares summing to exactly `total`; a zero weight gets zero.

    Examples
    --------
    >>> round_shares(10, np.ones(4)).tolist()
    [3, 3, 2, 2]
    """
    weights = np.asarray(weights, dtype=float)
    exact = total * weights / weights.sum()
    shares = np.floor(exact).astype(np.int64)
    left = total - int(shares.sum())
    fraction = exact - shares
    if left > 0:
        order = np.lexsort((np.arange(len(weights)), -fraction))
        order = order[weights[order] > 0]
        shares[order[:left]] += 1
    elif left < 0:
        order = np.lexsort((-np.arange(len(weights)), fraction))
        order = order[shares[order] > 0]
        shares[order[:-left]] -= 1
    return shares


@dataclass(frozen=True, eq=False)
class TrafficMatrix:
    """Relative traffic between the ranks of an all-to-all-v (see the module docstring).

    Parameters
    ----------
    kind : {"uniform", "zipf", "hotspot", "explicit"}
        How the weights are made.
    exponent : float, optional
        ``zipf``: the skew ``s`` > 0 (default 1.0).
    seed : int, optional
        ``zipf``: seed of the popularity order; ``hotspot``: of the hot ranks (default 0).
    hotspots : int, optional
        ``hotspot``: number of hot ranks ≥ 1 (default 1).
    fraction : float, optional
        ``hotspot``: share of every rank's data sent to the hot ranks, in (0, 1] (default 0.5).
    weights : numpy.ndarray, optional
        ``explicit``: the ``n × n`` weights (finite, ≥ 0, not all zero).
    source : str, optional
        ``explicit``: where the weights came from (a file name), for descriptions.

    Raises
    ------
    SimnetError
        For a parameter out of range (``path`` names it).

    Examples
    --------
    >>> TrafficMatrix("uniform").bytes(4, 10).tolist()
    [[3, 3, 2, 2], [3, 3, 2, 2], [3, 3, 2, 2], [3, 3, 2, 2]]
    >>> TrafficMatrix("hotspot", hotspots=1, fraction=0.5, seed=0).bytes(3, 12).sum()
    np.int64(36)
    """

    kind: str = "uniform"
    exponent: float = 1.0
    seed: int = 0
    hotspots: int = 1
    fraction: float = 0.5
    weights: np.ndarray | None = field(default=None, repr=False)
    source: str = ""

    def __post_init__(self) -> None:
        if self.kind not in MATRICES:
            raise SimnetError(f"must be one of {list(MATRICES)}, got {self.kind!r}", path="kind")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise SimnetError(f"must be an integer ≥ 0, got {self.seed!r}", path="seed")
        if not (isinstance(self.exponent, (int, float)) and np.isfinite(self.exponent) and self.exponent > 0):
            raise SimnetError(f"must be a finite number > 0, got {self.exponent!r}", path="exponent")
        if not isinstance(self.hotspots, int) or isinstance(self.hotspots, bool) or self.hotspots < 1:
            raise SimnetError(f"must be an integer ≥ 1, got {self.hotspots!r}", path="hotspots")
        if not (isinstance(self.fraction, (int, float)) and 0 < self.fraction <= 1):
            raise SimnetError(f"must be a fraction in (0, 1], got {self.fraction!r}", path="fraction")
        if (self.kind == "explicit") != (self.weights is not None):
            raise SimnetError("an explicit matrix needs weights, and only an explicit one takes them", path="weights")
        if self.weights is not None:
            weights = np.array(self.weights, dtype=float)
            if weights.ndim != 2 or weights.shape[0] != weights.shape[1] or weights.shape[0] < 1:
                raise SimnetError(f"must be a square matrix (n rows of n numbers), got shape {weights.shape}",
                                  path="weights")
            bad = ~np.isfinite(weights) | (weights < 0)
            if bad.any():
                i, j = (int(x) for x in np.argwhere(bad)[0])
                raise SimnetError(f"row {i}, column {j}: must be a finite number ≥ 0, got {weights[i, j]!r}",
                                  path="weights")
            if weights.sum() <= 0:
                raise SimnetError("must not be all zero", path="weights")
            weights.flags.writeable = False
            object.__setattr__(self, "weights", weights)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TrafficMatrix):
            return NotImplemented
        same_weights = (self.weights is None and other.weights is None) or (
            self.weights is not None and other.weights is not None and np.array_equal(self.weights, other.weights))
        return same_weights and self.describe() == other.describe()

    def __hash__(self) -> int:
        return hash(json.dumps(self.describe(), sort_keys=True))

    def describe(self) -> dict:
        """The matrix as plain data (explicit weights by shape, sum and source), for result rows."""
        match self.kind:
            case "uniform":
                return {"kind": "uniform"}
            case "zipf":
                return {"kind": "zipf", "exponent": self.exponent, "seed": self.seed}
            case "hotspot":
                return {"kind": "hotspot", "hotspots": self.hotspots, "fraction": self.fraction, "seed": self.seed}
        shown = {"kind": "explicit", "shape": list(self.weights.shape), "sum": float(self.weights.sum())}
        return shown | ({"source": self.source} if self.source else {})

    def weights_for(self, nranks: int) -> np.ndarray:
        """The ``nranks × nranks`` weights (float64).

        Raises
        ------
        SimnetError
            When an explicit matrix has another size, or a hotspot matrix more hot ranks than ranks.
        """
        n = nranks
        match self.kind:
            case "uniform":
                return np.ones((n, n))
            case "zipf":
                popularity = np.random.default_rng(self.seed).permutation(n) + 1
                return np.tile(1.0 / popularity.astype(float) ** self.exponent, (n, 1))
            case "hotspot":
                if self.hotspots > n:
                    raise SimnetError(f"must be at most the {n} ranks, got {self.hotspots}", path="hotspots")
                hot = np.zeros(n, dtype=bool)
                hot[np.random.default_rng(self.seed).choice(n, size=self.hotspots, replace=False)] = True
                cold = n - self.hotspots
                row = np.where(hot, self.fraction / self.hotspots, (1 - self.fraction) / cold if cold else 0.0)
                return np.tile(row, (n, 1))
        if self.weights.shape != (n, n):
            raise SimnetError(f"is {self.weights.shape[0]} × {self.weights.shape[1]} but the communicator has "
                              f"{n} ranks", path="matrix")
        return np.array(self.weights)

    def bytes(self, nranks: int, size_bytes: int) -> np.ndarray:
        """Bytes rank ``i`` sends to rank ``j``: ``n · size_bytes`` in all, in whole bytes (int64).

        Rows first get their share of the total, then each row is shared out over
        its columns (largest remainder, ties to the lower index), so a uniform
        matrix gives every rank exactly the blocks of ``alltoall``.
        """
        weights = self.weights_for(nranks)
        rows = weights.sum(axis=1)
        totals = round_shares(nranks * size_bytes, rows)
        result = np.zeros((nranks, nranks), dtype=np.int64)
        for i in np.flatnonzero(rows > 0).tolist():
            result[i] = round_shares(int(totals[i]), weights[i])
        return result


def cyclic_permutation(nranks: int, seed: int) -> np.ndarray:
    """A random cyclic permutation of ``0 .. nranks-1``: one cycle through all ranks, so nobody maps to itself.

    The ranks are shuffled with the seed and each is mapped to the next in that
    order, the last to the first; every ``n``-cycle is equally likely.

    >>> target = cyclic_permutation(5, 0)
    >>> sorted(target.tolist()), bool((target != np.arange(5)).all())
    ([0, 1, 2, 3, 4], True)
    """
    order = np.random.default_rng(seed).permutation(nranks)
    target = np.empty(nranks, dtype=np.int64)
    target[order] = np.roll(order, -1)
    return target


def pattern_targets(pattern: str, nranks: int, rng: np.random.Generator, permutation: np.ndarray | None = None
                    ) -> np.ndarray:
    """Destination of every rank's flow in one burst of a background pattern.

    Parameters
    ----------
    pattern : {"permutation", "random"}
        ``permutation``: `permutation` (the same every burst); ``random``: for
        each rank a destination drawn uniformly among the others from `rng`.
    nranks : int
        Ranks ≥ 2.
    rng : numpy.random.Generator
        Source of the random destinations.
    permutation : numpy.ndarray, optional
        The fixed permutation (see :func:`cyclic_permutation`).
    """
    if pattern == "permutation":
        return permutation
    if pattern == "random":
        return (np.arange(nranks) + rng.integers(1, nranks, size=nranks)) % nranks
    raise SimnetError(f"must be one of {list(PATTERNS)}, got {pattern!r}", path="pattern")
