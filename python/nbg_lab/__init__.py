"""nbg-lab in Python: VeriSilicon/Vivante NPU network binary graphs (NBG, ``*.nb``).

The same Rust library as the ``nbg`` command, not a second implementation:

- ``parse(path_or_bytes)`` gives a ``Graph`` (family, version, target, inputs, outputs, layers,
  operations, sections; ``to_dict()`` is ``nbg parse --json``; ``coefficients()`` gives every
  decoded weight as a numpy array, named as ``nbg coefficients -o`` names them);
- ``image(...)`` gives the byte ledger: every byte's owner (start, end, class, field);
- ``roundtrip``, ``diff``, ``check``, ``info`` and ``locate`` give the documents of the
  commands of the same names with ``--json``.

A refusal raises ``NbgError`` with ``.code``, ``.offset`` and ``.message``: the CLI's codes
(``bad-magic``, ``truncated``, ... and ``unreadable`` for an input that cannot be read).
"""

from ._native import (
    Graph,
    Image,
    Layer,
    NbgError,
    Operation,
    Owner,
    Section,
    Tensor,
    __version__,
    check,
    diff,
    image,
    info,
    locate,
    parse,
    roundtrip,
)

__all__ = [
    "Graph",
    "Image",
    "Layer",
    "NbgError",
    "Operation",
    "Owner",
    "Section",
    "Tensor",
    "__version__",
    "check",
    "diff",
    "image",
    "info",
    "locate",
    "parse",
    "roundtrip",
]
