"""The YAML loader simnet reads every file with: PyYAML's safe loader without base-60 numbers.

PyYAML follows YAML 1.1, whose implicit int and float types include sexagesimal
(base-60) numbers: an unquoted ``2:1`` loads as the integer 121 and ``1:30`` as 90.
YAML 1.2 dropped that form. :class:`Loader` is :class:`yaml.SafeLoader` with the
int and float resolvers of YAML 1.1 minus their base-60 alternatives, so such a
scalar stays the string it was written as (``"2:1"``, which an oversubscription
reads as the ratio 2, see :func:`simnet.units.parse_ratio`) and anything else that
expects a number refuses it by name. Everything else resolves as in
:func:`yaml.safe_load`.

Examples
--------
>>> safe_load("oversubscription: 2:1\\nat: 1:30\\nn: 0x10\\nx: 1.5")
{'oversubscription': '2:1', 'at': '1:30', 'n': 16, 'x': 1.5}
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["Loader", "safe_load"]

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"

_INT_PATTERN = re.compile(r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+)$""", re.X)
_FLOAT_PATTERN = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""", re.X)


class Loader(yaml.SafeLoader):
    """:class:`yaml.SafeLoader` whose implicit ints and floats exclude YAML 1.1's base-60 forms."""

    yaml_implicit_resolvers = {
        first: [(tag, {_INT: _INT_PATTERN, _FLOAT: _FLOAT_PATTERN}.get(tag, pattern)) for tag, pattern in resolvers]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }


def safe_load(text: str) -> Any:
    """The plain data of YAML `text`, as :func:`yaml.safe_load` reads it but with ``2:1`` and ``1:30`` as strings.

    Raises
    ------
    yaml.YAMLError
        For text that is not valid YAML.
    """
    return yaml.load(text, Loader=Loader)  # noqa: S506 - Loader is a SafeLoader
