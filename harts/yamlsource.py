"""YAML loading that remembers the line of every value, so errors can point at the file and line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError


@dataclass
class Located:
    """A parsed YAML value with the 1-based line it starts on.

    Mappings hold ``dict[str, Located]``, sequences ``list[Located]`` and scalars plain Python values.
    """

    value: Any
    line: int
    path: str

    def error(self, message: str) -> InputError:
        return InputError(message, self.path, self.line)

    def plain(self) -> Any:
        """The value with all location wrappers removed."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def _convert(node: yaml.Node, path: str) -> Located:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Located] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError("expected a plain key", path, key_node.start_mark.line + 1)
            if key in out:
                raise InputError(f"duplicate key '{key}'", path, key_node.start_mark.line + 1)
            out[key] = _convert(value_node, path)
        return Located(out, line, path)
    if isinstance(node, yaml.SequenceNode):
        return Located([_convert(item, path) for item in node.value], line, path)
    return Located(_construct_scalar(node), line, path)


def _construct_scalar(node: yaml.ScalarNode) -> Any:
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_object(node, deep=True)
    finally:
        loader.dispose()


def load_located(path: str | Path) -> Located:
    """Parse a YAML file into :class:`Located` values; any failure is an :class:`InputError`."""
    path = str(path)
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", path) from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"invalid YAML: {exc.problem}", path, line) from None
    if node is None:
        raise InputError("file is empty, expected a YAML mapping", path, 1)
    return _convert(node, path)
