"""One registry helper for everything a job names: algorithms, models, metrics, engines and
verifiers (stdlib only).

A :class:`Registry` maps job-file names to what they build, reads like a mapping (``name in
registry``, ``registry[name]``, ``sorted(registry)``) and refuses an unknown name with one
wording: ``Unknown algorithm 'optimall'. Did you mean 'optimal'? Valid algorithms: ...``.
A registry with an entry-point ``group`` also holds what installed packages declare there, so
that a third-party package adds an algorithm or a model without editing anonlab::

    # pyproject.toml of the package "anonlab-mondrian"
    [project.entry-points."anonlab.algorithms"]
    mondrian = "anonlab_mondrian:Mondrian"

The entry points are read once, the first time the registry is listed or a name is looked up;
a name anonlab already has is never replaced (the entry point is skipped with a warning).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from anonlab._validation import did_you_mean
from anonlab.exceptions import ParameterError

__all__ = ["Registry"]

_T = TypeVar("_T")


class Registry(Mapping[str, _T], Generic[_T]):
    """Job-file names of one kind of thing, with a did-you-mean error for an unknown name.

    Parameters
    ----------
    kind : str
        What one entry is, as the error names it (``"algorithm"``, ``"privacy model"``).
    plural : str, optional
        How the error lists them (``"Valid models: ..."``); default ``kind + "s"``.
    group : str, optional
        The entry-point group whose entries installed packages add
        (``"anonlab.algorithms"``); None: anonlab's own entries only.
    sort : bool
        Whether :meth:`names` (and so the error) lists the names sorted, or in the order
        they were registered.

    Examples
    --------
    >>> colours = Registry[int]("colour")
    >>> colours.register("red", 1)
    1
    >>> colours.lookup("red")
    1
    >>> colours.lookup("rde")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: Unknown colour 'rde'. Did you mean 'red'? Valid colours: red.
    """

    def __init__(
        self,
        kind: str,
        *,
        plural: str | None = None,
        group: str | None = None,
        sort: bool = False,
    ) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self.group = group
        self.sort = sort
        self._entries: dict[str, _T] = {}
        self._loaded = group is None

    def register(self, name: str, item: _T) -> _T:
        """Make ``item`` available under ``name``; return it (usable in a decorator).

        Raises
        ------
        ValueError
            If ``name`` already names another item.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"A {self.kind} needs a name; got {name!r}.")
        held = self._entries.get(name)
        if held is not None and held is not item:
            raise ValueError(f"The {self.kind} name {name!r} is taken.")
        self._entries[name] = item
        return item

    def __delitem__(self, name: str) -> None:
        """Remove the entry ``name`` (a test's own family, registered for the test)."""
        del self._entries[name]

    def names(self) -> list[str]:
        """Every name, sorted or in registration order (as the registry was made).

        Examples
        --------
        >>> r = Registry[int]("number", sort=True)
        >>> _ = r.register("two", 2); _ = r.register("one", 1)
        >>> r.names()
        ['one', 'two']
        """
        self._load()
        return sorted(self._entries) if self.sort else list(self._entries)

    def registered(self) -> list[tuple[str, _T]]:
        """Every entry in the order it was registered (anonlab's own first), whatever
        ``sort`` says: the order help texts and messages group them in.

        Examples
        --------
        >>> r = Registry[int]("number", sort=True)
        >>> _ = r.register("two", 2); _ = r.register("one", 1)
        >>> r.registered()
        [('two', 2), ('one', 1)]
        """
        self._load()
        return list(self._entries.items())

    def unknown(self, name: object) -> ParameterError:
        """The error for a name the registry does not hold: the closest name and every name.

        Examples
        --------
        >>> r = Registry[int]("engine")
        >>> _ = r.register("numpy", 1)
        >>> str(r.unknown("nupy"))
        "Unknown engine 'nupy'. Did you mean 'numpy'? Valid engines: numpy."
        """
        names = self.names()
        return ParameterError(
            f"Unknown {self.kind} {name!r}.{did_you_mean(str(name), names)} "
            f"Valid {self.plural}: {', '.join(names)}."
        )

    def lookup(self, name: object) -> _T:
        """The entry called ``name``.

        Raises
        ------
        ParameterError
            If there is none (:meth:`unknown`).

        Examples
        --------
        >>> r = Registry[int]("engine")
        >>> r.register("numpy", 1) == r.lookup("numpy")
        True
        """
        self._load()
        if isinstance(name, str) and name in self._entries:
            return self._entries[name]
        raise self.unknown(name)

    def __getitem__(self, name: str) -> _T:
        self._load()
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._load()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()!r})"

    def _load(self) -> None:
        """Add, once, the entries installed packages declare in the entry-point group."""
        if self._loaded:
            return
        self._loaded = True  # (a plugin that imports anonlab while loading sees no loop)
        for point in entry_points(group=str(self.group)):
            try:
                item = point.load()
            except Exception as exc:  # a broken plugin must not break anonlab
                warnings.warn(
                    f"The {self.kind} {point.name!r} of entry point {point.value!r} cannot be "
                    f"loaded ({type(exc).__name__}: {exc}); it is skipped.",
                    RuntimeWarning,
                    stacklevel=3,
                )
                continue
            held = self._entries.setdefault(point.name, item)
            if held is not item:
                warnings.warn(
                    f"The {self.kind} {point.name!r} of entry point {point.value!r} is skipped: "
                    f"anonlab already has a {self.kind} of that name.",
                    RuntimeWarning,
                    stacklevel=3,
                )
