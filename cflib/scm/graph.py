"""Causal graphs: parents mapping, topological order, descendants, mutilation, drawing.

Used by every chapter: the Morpho-MNIST attribute graph (foundations), the deep SCMs of the
benchmark chapter (Melistas et al., Sec. 3) and the standard fairness model (Plecko & Bareinboim).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..validation import ValidationError, ValidationTypeError, check_names, describe

__all__ = ["CausalGraph"]


class CausalGraph:
    """A directed acyclic graph given by each node's parents.

    Parameters
    ----------
    parents : mapping of str to iterable of str
        ``{node: [parent, ...]}``. Every parent must itself be a key (root nodes map to ``[]``).

    Raises
    ------
    TypeError
        ``parents`` is not a mapping, a node name is not a string, or a node's parents are not a list of names.
    ValueError
        No nodes, a parent that is not a node, a self-loop, or a cycle (the message names the cycle).

    Examples
    --------
    >>> g = CausalGraph({"t": [], "i": ["t"]})
    >>> g.topological_order()
    ['t', 'i']
    >>> g.mutilate(["i"]).parents("i")
    ()
    """

    def __init__(self, parents: Mapping[str, Iterable[str]]) -> None:
        if not isinstance(parents, Mapping):
            raise ValidationTypeError(
                f"parents must be a mapping {{node: [parents]}}, got {describe(parents)} ({type(parents).__name__})"
            )
        if not parents:
            raise ValidationError("parents must name at least one node, got an empty mapping; roots map to []")
        self._parents: dict[str, tuple[str, ...]] = {}
        for node, pa in parents.items():
            if not isinstance(node, str):
                raise ValidationTypeError(f"node names must be strings, got {describe(node)} ({type(node).__name__})")
            if not node:
                raise ValidationError("node names must be non-empty strings, got ''")
            if isinstance(pa, str):
                raise ValidationTypeError(f"parents of {node!r} must be a list of names, got the string {pa!r}")
            if pa is None or isinstance(pa, Mapping) or not hasattr(pa, "__iter__"):
                raise ValidationTypeError(
                    f"parents of {node!r} must be a list of names ([] for a root), got {describe(pa)}"
                )
            pa = tuple(pa)
            for p in pa:
                if not isinstance(p, str):
                    raise ValidationTypeError(
                        f"parents of {node!r} must be node names (str), got {describe(p)} ({type(p).__name__})"
                    )
                if p not in parents:
                    raise ValidationError(
                        f"parent {p!r} of {node!r} is not a node of the graph; add it with no parents"
                    )
                if p == node:
                    raise ValidationError(f"node {node!r} lists itself as a parent (self-loop)")
            self._parents[node] = pa
        self._order = self._toposort()

    def _toposort(self) -> list[str]:
        order: list[str] = []
        state: dict[str, int] = {}  # 1 visiting, 2 done

        def visit(n: str, stack: list[str]) -> None:
            if state.get(n) == 2:
                return
            if state.get(n) == 1:
                cycle = stack[stack.index(n) :] + [n]
                raise ValidationError(f"the graph has a cycle: {' -> '.join(reversed(cycle))}")
            state[n] = 1
            for p in self._parents[n]:
                visit(p, [*stack, n])
            state[n] = 2
            order.append(n)

        for n in self._parents:
            visit(n, [])
        return order

    @property
    def nodes(self) -> tuple[str, ...]:
        """Nodes in the order given."""
        return tuple(self._parents)

    def _check(self, node: str) -> None:
        if not isinstance(node, str):
            raise ValidationTypeError(f"node must be a node name (str), got {describe(node)} ({type(node).__name__})")
        if node not in self._parents:
            raise ValidationError(f"{node!r} is not a node of the graph (nodes: {', '.join(self._parents)})")

    def parents(self, node: str) -> tuple[str, ...]:
        """Parents of ``node``."""
        self._check(node)
        return self._parents[node]

    def children(self, node: str) -> tuple[str, ...]:
        """Children of ``node``."""
        self._check(node)
        return tuple(n for n, pa in self._parents.items() if node in pa)

    def topological_order(self) -> list[str]:
        """Nodes ordered so that every parent comes before its children."""
        return list(self._order)

    def descendants(self, node: str) -> set[str]:
        """All nodes reachable from ``node`` (excluding itself)."""
        self._check(node)
        out: set[str] = set()
        frontier = [node]
        while frontier:
            for c in self.children(frontier.pop()):
                if c not in out:
                    out.add(c)
                    frontier.append(c)
        return out

    def ancestors(self, node: str) -> set[str]:
        """All nodes from which ``node`` is reachable (excluding itself)."""
        self._check(node)
        out: set[str] = set()
        frontier = [node]
        while frontier:
            for p in self._parents[frontier.pop()]:
                if p not in out:
                    out.add(p)
                    frontier.append(p)
        return out

    def mutilate(self, targets: Iterable[str]) -> CausalGraph:
        """The graph after an intervention: incoming edges of ``targets`` removed.

        Parameters
        ----------
        targets : str or iterable of str
            Intervened nodes (the keys of a mapping such as a ``do`` dict).

        Returns
        -------
        CausalGraph
        """
        targets = set(
            check_names(list(targets) if isinstance(targets, Mapping) else targets, "targets", self.nodes, what="node")
        )
        return CausalGraph({n: (() if n in targets else pa) for n, pa in self._parents.items()})

    def edges(self) -> list[tuple[str, str]]:
        """Directed edges ``(parent, child)``."""
        return [(p, n) for n in self._order for p in self._parents[n]]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CausalGraph) and {n: set(p) for n, p in self._parents.items()} == {
            n: set(p) for n, p in other._parents.items()
        }

    def __repr__(self) -> str:
        return f"CausalGraph({ {n: list(p) for n, p in self._parents.items()} })"

    def draw(self, ax=None, *, intervened: Iterable[str] = (), labels: Mapping[str, str] | None = None):
        """Draw the graph in layers (roots at the top).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on.
        intervened : iterable of str
            Nodes drawn as intervened (square, shaded).
        labels : mapping, optional
            Display names for nodes.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        intervened = set(check_names(intervened, "intervened", self.nodes, what="node"))
        if labels is not None and not isinstance(labels, Mapping):
            raise ValidationTypeError(f"labels must be a mapping {{node: display name}}, got {describe(labels)}")
        ax = plt.gca() if ax is None else ax
        depth: dict[str, int] = {}
        for n in self._order:
            depth[n] = 1 + max((depth[p] for p in self._parents[n]), default=-1)
        layers: dict[int, list[str]] = {}
        for n in self._order:
            layers.setdefault(depth[n], []).append(n)
        pos = {}
        for d, ns in layers.items():
            for k, n in enumerate(ns):
                pos[n] = ((k - (len(ns) - 1) / 2) * 1.6, -d)
        for p, c in self.edges():
            ax.annotate(
                "",
                xy=pos[c],
                xytext=pos[p],
                arrowprops={"arrowstyle": "-|>", "color": "0.3", "lw": 1.4, "shrinkA": 16, "shrinkB": 16},
            )
        for n, (x, y) in pos.items():
            box = "square,pad=0.5" if n in intervened else "circle,pad=0.35"
            face = "#E69F00" if n in intervened else "white"
            ax.text(
                x,
                y,
                (labels or {}).get(n, n),
                ha="center",
                va="center",
                fontsize=12,
                bbox={"boxstyle": box, "fc": face, "ec": "0.2", "lw": 1.2},
            )
        xs = [x for x, _ in pos.values()]
        ys = [y for _, y in pos.values()]
        ax.set_xlim(min(xs) - 1, max(xs) + 1)
        ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)
        ax.set_axis_off()
        return ax
