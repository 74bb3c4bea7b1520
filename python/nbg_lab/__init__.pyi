"""Type stubs of nbg_lab (the extension module nbg_lab._native, re-exported)."""

import os
from typing import Any, Optional, Union

import numpy

__version__: str

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]
Path = Union[str, "os.PathLike[str]"]

class NbgError(Exception):
    """A refusal: the CLI's stable kebab-case code, the file offset and a message."""

    code: str
    offset: int
    message: str

class Tensor:
    """A graph input or output, as its I/O record describes it."""

    @property
    def name(self) -> Optional[str]: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def dimensions(self) -> list[int]: ...
    @property
    def dtype(self) -> Optional[str]: ...
    @property
    def quantization(self) -> Optional[str]: ...
    @property
    def scale(self) -> Optional[float]: ...
    @property
    def zero_point(self) -> Optional[int]: ...
    @property
    def fixed_point_position(self) -> Optional[int]: ...

class Layer:
    """A layer of the network's layer table."""

    @property
    def index(self) -> int: ...
    @property
    def id(self) -> Optional[int]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def operation_count(self) -> Optional[int]: ...
    @property
    def offset(self) -> Optional[int]: ...

class Operation:
    """An operation of the network's operation table."""

    @property
    def index(self) -> int: ...
    @property
    def type(self) -> Optional[int]: ...
    @property
    def type_name(self) -> Optional[str]: ...
    @property
    def layer_id(self) -> Optional[int]: ...
    @property
    def offset(self) -> Optional[int]: ...

class Section:
    """A section (v2) or table (v1) of the file."""

    @property
    def name(self) -> Optional[str]: ...
    @property
    def offset(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def sha256(self) -> Optional[str]: ...

class Graph:
    """A parsed NBG file; its attributes come from the document ``to_dict()`` returns."""

    @property
    def format(self) -> Optional[str]: ...
    @property
    def family(self) -> Optional[str]: ...
    @property
    def version(self) -> Optional[int]: ...
    @property
    def target(self) -> Optional[str]: ...
    @property
    def name(self) -> Optional[str]: ...
    @property
    def size(self) -> Optional[int]: ...
    @property
    def sha256(self) -> Optional[str]: ...
    @property
    def inputs(self) -> list[Tensor]: ...
    @property
    def outputs(self) -> list[Tensor]: ...
    @property
    def layers(self) -> list[Layer]: ...
    @property
    def operations(self) -> list[Operation]: ...
    @property
    def sections(self) -> list[Section]: ...
    def to_dict(self) -> dict[str, Any]:
        """The document ``nbg parse --json`` prints."""
    def coefficients(self, float: bool = False) -> dict[str, numpy.ndarray]:
        """Every decoded weight and bias, named and typed as ``nbg coefficients -o`` writes them."""

class Owner:
    """One owned range of the file."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def class_(self) -> Optional[str]: ...
    @property
    def field(self) -> Optional[str]: ...

class Image:
    """A file's byte ledger, as ``nbg image --json`` prints it."""

    @property
    def owners(self) -> list[Owner]: ...
    @property
    def totals(self) -> dict[str, int]: ...
    @property
    def identical(self) -> Optional[bool]: ...
    def to_dict(self) -> dict[str, Any]:
        """The document ``nbg image --json`` prints."""

def parse(source: Source) -> Graph:
    """Parse an NBG file (a path or its bytes) strictly; raises NbgError at the first broken rule."""

def image(source: Source) -> Image:
    """The byte ledger of an NBG file."""

def roundtrip(source: Source) -> dict[str, Any]:
    """``nbg roundtrip --json``'s entry for the file (nothing is written)."""

def diff(a: Path, b: Path) -> dict[str, Any]:
    """``nbg diff --json``'s document for two files."""

def check(
    paths: list[Path],
    target: Optional[int] = None,
    runtime: Optional[int] = None,
    strict: bool = False,
) -> dict[str, Any]:
    """``nbg check --json``'s document: ``{"files": [...]}``."""

def info(path: Path) -> dict[str, Any]:
    """``nbg info --json``'s entry for the file."""

def locate(model: Path, graph: Path, layers: bool = False) -> dict[str, Any]:
    """``nbg locate --json``'s document."""
