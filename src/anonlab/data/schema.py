"""Attribute roles: which columns identify, quasi-identify, are sensitive or insensitive."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum

from anonlab.exceptions import ParameterError

__all__ = ["Role", "Schema"]


class Role(str, Enum):
    """The role of an attribute in a release.

    Attributes
    ----------
    IDENTIFIER
        Directly identifies a person (name, SSN); removed before release.
    QUASI_IDENTIFIER
        Can be linked with outside data (age, ZIP, sex); generalized or suppressed.
    SENSITIVE
        The value to protect (diagnosis, salary); judged by l-diversity, t-closeness, ...
    INSENSITIVE
        Released as it is.
    LIMIT
        A parameter of each record's own privacy (a personal leakage limit), read by
        per-record models; never a quasi-identifier, never released unless asked.

    Examples
    --------
    >>> Role.parse("qi")
    <Role.QUASI_IDENTIFIER: 'quasi-identifier'>
    >>> Role.SENSITIVE.value
    'sensitive'
    """

    IDENTIFIER = "identifier"
    QUASI_IDENTIFIER = "quasi-identifier"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"
    LIMIT = "limit"

    @classmethod
    def parse(cls, value: str | Role) -> Role:
        """Return the role named by ``value`` (``"qi"`` and ``"quasi_identifier"`` accepted).

        Examples
        --------
        >>> Role.parse("quasi_identifier"), Role.parse("sensitive")
        (<Role.QUASI_IDENTIFIER: 'quasi-identifier'>, <Role.SENSITIVE: 'sensitive'>)
        >>> Role.parse("secret")
        Traceback (most recent call last):
        ...
        anonlab.exceptions.ParameterError: Unknown attribute role 'secret'; valid roles: identifier, quasi-identifier, sensitive, insensitive, limit.
        """
        if isinstance(value, Role):
            return value
        key = str(value).strip().lower().replace("_", "-")
        aliases = {"qi": "quasi-identifier", "id": "identifier", "quasi": "quasi-identifier"}
        key = aliases.get(key, key)
        for role in cls:
            if role.value == key:
                return role
        valid = ", ".join(r.value for r in cls)
        raise ParameterError(f"Unknown attribute role {value!r}; valid roles: {valid}.")


@dataclass(frozen=True)
class Schema:
    """Roles of the columns of a table; columns not named are insensitive.

    Parameters
    ----------
    roles : Mapping[str, Role or str]
        Role per column name.

    Examples
    --------
    >>> s = Schema.from_lists(quasi_identifiers=["age", "zip"], sensitive=["disease"])
    >>> s.quasi_identifiers, s.sensitive
    (['age', 'zip'], ['disease'])
    >>> s.role("salary")
    <Role.INSENSITIVE: 'insensitive'>
    """

    roles: Mapping[str, Role] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "roles", {k: Role.parse(v) for k, v in self.roles.items()})

    @classmethod
    def from_lists(
        cls,
        *,
        identifiers: Iterable[str] = (),
        quasi_identifiers: Iterable[str] = (),
        sensitive: Iterable[str] = (),
        insensitive: Iterable[str] = (),
        limits: Iterable[str] = (),
    ) -> Schema:
        """Build a schema from lists of column names per role; a column may have one role.

        Examples
        --------
        >>> s = Schema.from_lists(identifiers=["name"], quasi_identifiers=["age"], sensitive=["disease"])
        >>> s.role("name"), s.role("age")
        (<Role.IDENTIFIER: 'identifier'>, <Role.QUASI_IDENTIFIER: 'quasi-identifier'>)
        """
        roles: dict[str, Role] = {}
        for names, role in (
            (identifiers, Role.IDENTIFIER),
            (quasi_identifiers, Role.QUASI_IDENTIFIER),
            (sensitive, Role.SENSITIVE),
            (insensitive, Role.INSENSITIVE),
            (limits, Role.LIMIT),
        ):
            for name in names:
                if name in roles and roles[name] is not role:
                    raise ParameterError(
                        f"Column {name!r} is given two roles: {roles[name].value} and {role.value}."
                    )
                roles[name] = role
        return cls(roles)

    def role(self, column: str) -> Role:
        """Return the role of ``column`` (insensitive when not named).

        Examples
        --------
        >>> s = Schema.from_lists(sensitive=["disease"])
        >>> s.role("disease"), s.role("hours")
        (<Role.SENSITIVE: 'sensitive'>, <Role.INSENSITIVE: 'insensitive'>)
        """
        return self.roles.get(column, Role.INSENSITIVE)

    def columns_with(self, role: Role) -> list[str]:
        """Return the columns with ``role``, in the order they were given.

        Examples
        --------
        >>> s = Schema.from_lists(quasi_identifiers=["zip", "age"])
        >>> s.columns_with(Role.QUASI_IDENTIFIER)
        ['zip', 'age']
        """
        return [c for c, r in self.roles.items() if r is role]

    @property
    def quasi_identifiers(self) -> list[str]:
        """Columns marked quasi-identifier."""
        return self.columns_with(Role.QUASI_IDENTIFIER)

    @property
    def sensitive(self) -> list[str]:
        """Columns marked sensitive."""
        return self.columns_with(Role.SENSITIVE)

    @property
    def identifiers(self) -> list[str]:
        """Columns marked identifier."""
        return self.columns_with(Role.IDENTIFIER)

    @property
    def limits(self) -> list[str]:
        """Columns holding a per-record privacy limit."""
        return self.columns_with(Role.LIMIT)
