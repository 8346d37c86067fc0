"""Sparse payloads: every rank's top-k gradient as real index sets, and their wire encoding.

A :class:`SparsePayload` describes, for ``p`` ranks, one sparse vector per rank of
dimension ``N`` with ``k = round(d N)`` nonzeros (``d`` the density). Indices come
from a seeded :class:`numpy.random.Generator` (uniform or skewed) or from ``.npy``
files of real indices and values. :meth:`SparsePayload.vector` returns rank ``r``'s
vector as a :class:`SparseVector` (sorted unique ``uint32`` indices, ``float32``
values), generated from ``(seed, r)`` alone, so a rank's vector never depends on
how many ranks exist or in which order they are asked for.

Encoding on the wire (:meth:`SparsePayload.encoded_bytes`): a message that carries
``nnz`` nonzeros of a segment of ``n`` entries costs
``header + nnz (index_bytes + value_bytes)`` bytes in sparse form and
``header + n value_bytes`` in dense form, and is sent dense whenever that is
strictly smaller (SparCML's switch to a dense representation, Renggli et al. 2019).

Memory: indices are ``uint32`` (``uint64`` beyond 2**32 entries) and no dense
array of dimension ``N`` is ever built, so 64 ranks of ``N = 128M``, ``d = 1/128``
take 64 x 1M x 8 B = 512 MiB with values and half that without.

References
----------
Renggli, C., Ashkboos, S., Aghagolzadeh, M., Alistarh, D. and Hoefler, T. (2019).
SparCML: high-performance sparse communication for machine learning. SC'19.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simnet.errors import SimnetError
from simnet.speed import sorted_unique

__all__ = ["DISTRIBUTIONS", "SparseVector", "SparsePayload", "index_dtype"]

DISTRIBUTIONS = ("uniform", "zipf", "clustered", "file")


def _smallest(uniform: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` smallest of `uniform` (draws in [0, 1)): ``argpartition(uniform, count - 1)[:count]``.

    Only the draws below a bound that a few more than `count` of them fall under
    (six standard deviations above the expected count) are partitioned; every
    other draw is above all of those, so the positions are the same set. If too few
    fall under the bound, or draws tie at the `count`-th value (where the choice
    among them is the partition's own), the whole array is partitioned.
    """
    size = uniform.size
    share = count / size
    bound = share + 6.0 * math.sqrt(share * (1.0 - share) / size) + 16.0 / size
    if bound < 0.5:
        below = np.flatnonzero(uniform < bound)
        if below.size >= count:
            drawn = uniform[below]
            order = np.argpartition(drawn, count - 1)
            if np.count_nonzero(drawn == drawn[order[count - 1]]) == 1:
                return below[order[:count]]
    return np.argpartition(uniform, count - 1)[:count]


def index_dtype(dimension: int) -> np.dtype:
    """Smallest unsigned integer type that holds indices ``0 .. dimension-1``."""
    return np.dtype(np.uint32) if dimension <= 2**32 else np.dtype(np.uint64)


@dataclass(frozen=True, eq=False)
class SparseVector:
    """One rank's sparse vector.

    Attributes
    ----------
    indices : numpy.ndarray
        Sorted, unique indices in ``[0, dimension)``.
    values : numpy.ndarray or None
        Values at those indices (``None`` when only the index set matters).
    """

    indices: np.ndarray
    values: np.ndarray | None = None

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.indices.size)


def _positive_int(value: object, path: str, minimum: int = 1) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < minimum:
        raise SimnetError(f"must be an integer ≥ {minimum}, got {value!r}", path=path)
    return int(value)


@dataclass(frozen=True)
class SparsePayload:
    """Per-rank sparse vectors of dimension ``N`` and density ``d``, and their encoding.

    Parameters
    ----------
    dimension : int
        Entries ``N`` of every (dense) vector, ≥ 1.
    density : float
        Fraction ``d`` of nonzeros per rank, in ``(0, 1]``; ``k = max(1, round(d N))``.
        Ignored for ``distribution="file"``, where the files say how many there are.
    distribution : {"uniform", "zipf", "clustered", "file"}
        ``uniform``: independent uniformly random k-subsets per rank.
        ``zipf``: every rank draws indices from the same power law
        ``P(position j) ∝ (j + 1)^-skew`` over positions scattered over the index space
        by a permutation shared by all ranks, so ranks overlap more than uniform ones
        (less fill-in), as top-k gradients of one model do.
        ``clustered``: indices come in aligned runs of ``cluster`` consecutive entries
        at uniformly random places (layer-wise locality).
        ``file``: ``indices_file`` and optional ``values_file`` are ``.npy`` paths with
        ``{rank}`` in them, e.g. ``"grads/idx_{rank}.npy"``.
    seed : int
        Seed of the random generators; rank ``r`` uses ``default_rng([seed, r])``.
    index_bytes, value_bytes, header_bytes : int
        Wire widths of an index, a value and a per-message header (default 4, 4, 4).
    skew : float
        Exponent of the ``zipf`` distribution, > 0 (default 1.1).
    cluster : int
        Run length of the ``clustered`` distribution, ≥ 1 (default 64).
    indices_file, values_file : str
        Path templates of the ``file`` distribution.

    Notes
    -----
    For sparse runs the collective's ``size_bytes`` is the dense size
    ``N * value_bytes``, so that sparse and dense algorithms compare on the same
    payload (:attr:`size_bytes`).
    """

    dimension: int
    density: float = 1 / 128
    distribution: str = "uniform"
    seed: int = 0
    index_bytes: int = 4
    value_bytes: int = 4
    header_bytes: int = 4
    skew: float = 1.1
    cluster: int = 64
    indices_file: str = ""
    values_file: str = ""

    def __post_init__(self) -> None:
        _positive_int(self.dimension, "dimension")
        if self.distribution not in DISTRIBUTIONS:
            raise SimnetError(
                f"must be one of {DISTRIBUTIONS}, got {self.distribution!r}", path="distribution"
            )
        if self.distribution != "file" and not (
            isinstance(self.density, (int, float)) and 0 < self.density <= 1
        ):
            raise SimnetError(f"must be a fraction in (0, 1], got {self.density!r}", path="density")
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool) or self.seed < 0:
            raise SimnetError(f"must be an integer ≥ 0, got {self.seed!r}", path="seed")
        _positive_int(self.index_bytes, "index_bytes")
        _positive_int(self.value_bytes, "value_bytes")
        _positive_int(self.header_bytes, "header_bytes", minimum=0)
        _positive_int(self.cluster, "cluster")
        if not (isinstance(self.skew, (int, float)) and self.skew > 0 and math.isfinite(self.skew)):
            raise SimnetError(f"must be a finite number > 0, got {self.skew!r}", path="skew")
        if self.distribution == "file" and "{rank}" not in self.indices_file:
            raise SimnetError(
                f"must be a .npy path containing '{{rank}}', got {self.indices_file!r}", path="indices_file"
            )

    @property
    def k(self) -> int:
        """Nonzeros per rank for generated distributions, ``max(1, round(d N))``."""
        return max(1, min(self.dimension, round(self.density * self.dimension)))

    @property
    def size_bytes(self) -> int:
        """Dense size of one rank's vector, ``N * value_bytes``."""
        return self.dimension * self.value_bytes

    def describe(self) -> dict:
        """The parameters as a plain dict (for ``Schedule.params`` and result rows)."""
        return {
            "dimension": self.dimension,
            "density": self.density,
            "distribution": self.distribution,
            "seed": self.seed,
            "index_bytes": self.index_bytes,
            "value_bytes": self.value_bytes,
            "header_bytes": self.header_bytes,
        }

    def encoded_bytes(self, nnz: int, entries: int, *, dense: bool | None = None) -> tuple[int, bool]:
        """Wire size of a message with `nnz` nonzeros out of `entries`, and whether it is dense.

        Parameters
        ----------
        nnz : int
            Nonzeros carried.
        entries : int
            Entries of the segment(s) carried (their dense length).
        dense : bool, optional
            Force the dense (``True``) or sparse (``False``) form; by default the
            smaller one, sparse on a tie.

        Returns
        -------
        tuple of (int, bool)
            ``(nbytes, sent_dense)``.
        """
        sparse_bytes = nnz * (self.index_bytes + self.value_bytes)
        dense_bytes = entries * self.value_bytes
        sent_dense = dense_bytes < sparse_bytes if dense is None else dense
        return self.header_bytes + (dense_bytes if sent_dense else sparse_bytes), sent_dense

    def vector(self, rank: int, *, values: bool = True) -> SparseVector:
        """Rank `rank`'s sparse vector.

        Parameters
        ----------
        rank : int
            Rank ≥ 0.
        values : bool, optional
            Also produce values (``float32`` standard normal for generated
            distributions); without them only the index set is built.
        """
        if self.distribution == "file":
            return self._load(rank, values)
        rng = np.random.default_rng([self.seed, rank])
        match self.distribution:
            case "uniform":
                indices = self._uniform(rng)
            case "zipf":
                indices = self._zipf(rng)
            case _:
                indices = self._clustered(rng)
        vals = rng.standard_normal(indices.size, dtype=np.float32) if values else None
        return SparseVector(indices, vals)

    def _finish(self, rng: np.random.Generator, unique: np.ndarray) -> np.ndarray:
        """Keep a uniformly random `k` of the sorted unique candidates, still sorted."""
        excess = unique.size - self.k
        if excess > 0:
            keep = np.ones(unique.size, dtype=bool)
            keep[_smallest(rng.random(unique.size), excess)] = False
            unique = unique[keep]
        return unique.astype(index_dtype(self.dimension), copy=False)

    def _uniform(self, rng: np.random.Generator, initial: np.ndarray | None = None) -> np.ndarray:
        n, k = self.dimension, self.k
        if 2 * k > n:
            return self._finish(rng, np.sort(rng.permutation(n)[:k]))
        dtype = index_dtype(n)
        unique = np.empty(0, dtype=dtype) if initial is None else initial.astype(dtype)
        while unique.size < k:
            missing = k - unique.size
            margin = int(missing * (k + missing) / n) + 16
            draw = rng.integers(0, n, size=missing + margin, dtype=dtype)
            unique = sorted_unique(np.concatenate((unique, draw)) if unique.size else draw)
        return self._finish(rng, unique)

    def _zipf(self, rng: np.random.Generator) -> np.ndarray:
        n, k, s = self.dimension, self.k, float(self.skew)
        shared = np.random.default_rng([self.seed, 2**32])
        stride = int(shared.integers(1, n)) if n > 1 else 1
        while math.gcd(stride, n) != 1:
            stride += 1
        offset = int(shared.integers(0, n))
        unique = np.empty(0, dtype=np.int64)
        for _ in range(32):
            missing = k - unique.size
            if missing <= 0:
                break
            u = rng.random(2 * missing + 16)
            if abs(s - 1.0) < 1e-12:
                x = np.power(float(n + 1), u)
            else:
                x = np.power(u * ((n + 1.0) ** (1.0 - s) - 1.0) + 1.0, 1.0 / (1.0 - s))
            positions = np.minimum(np.floor(x).astype(np.int64) - 1, n - 1)
            unique = sorted_unique(np.concatenate((unique, (positions * stride + offset) % n)))
        return self._uniform(rng, unique) if unique.size < k else self._finish(rng, unique)

    def _clustered(self, rng: np.random.Generator) -> np.ndarray:
        n, k, length = self.dimension, self.k, min(self.cluster, self.dimension)
        runs = math.ceil(k / length)
        slots = n // length
        if runs > slots:
            return self._uniform(rng)
        starts = SparsePayload(dimension=slots, density=runs / slots, seed=self.seed)._uniform(rng)
        indices = (starts.astype(np.int64)[:, None] * length + np.arange(length)).ravel()
        return self._finish(rng, indices)

    def _load(self, rank: int, values: bool) -> SparseVector:
        path = Path(self.indices_file.format(rank=rank))
        try:
            indices = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise SimnetError(f"cannot read {str(path)!r}: {error}", path="indices_file") from error
        if indices.ndim != 1 or not np.issubdtype(indices.dtype, np.integer):
            raise SimnetError(f"{str(path)!r}: expected a 1-d integer array", path="indices_file")
        if indices.size and (indices.min() < 0 or indices.max() >= self.dimension):
            raise SimnetError(f"{str(path)!r}: indices must lie in [0, {self.dimension})", path="indices_file")
        vals = None
        if values and self.values_file:
            vpath = Path(self.values_file.format(rank=rank))
            try:
                vals = np.load(vpath, allow_pickle=False).astype(np.float32)
            except (OSError, ValueError) as error:
                raise SimnetError(f"cannot read {str(vpath)!r}: {error}", path="values_file") from error
            if vals.shape != indices.shape:
                raise SimnetError(f"{str(vpath)!r}: expected {indices.size} values", path="values_file")
        elif values:
            vals = np.ones(indices.size, dtype=np.float32)
        order = np.argsort(indices, kind="stable")
        indices = indices[order].astype(index_dtype(self.dimension))
        if indices.size > 1 and not np.all(indices[1:] != indices[:-1]):
            raise SimnetError(f"{str(path)!r}: indices must be unique", path="indices_file")
        return SparseVector(indices, None if vals is None else vals[order])
