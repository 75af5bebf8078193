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
    line: int | None
    path: str | None

    def error(self, message: str) -> InputError:
        return InputError(message, self.path, self.line)

    def plain(self) -> Any:
        """The value with all location wrappers removed."""
        if isinstance(self.value, dict):
            return {k: v.plain() for k, v in self.value.items()}
        if isinstance(self.value, list):
            return [v.plain() for v in self.value]
        return self.value


def located(value: Any) -> Located:
    """A plain value (a default, or one set in code) wrapped as a parsed one is, with no file or line."""
    if isinstance(value, Located):
        return value
    if isinstance(value, dict):
        return Located({k: located(v) for k, v in value.items()}, None, None)
    if isinstance(value, list):
        return Located([located(v) for v in value], None, None)
    return Located(value, None, None)


def _converted(node: yaml.Node, path: str) -> Located:
    """A composed document as Located values. One loader constructs all its scalars: with a loader made for each,
    loading microcode/harts.yaml took 1.2 ms against 0.86 (measured alternately in one process)."""
    loader = yaml.SafeLoader("")
    try:
        return _convert(node, path, {}, set(), loader)
    finally:
        loader.dispose()


def _convert(node: yaml.Node, path: str, done: dict[int, Located], open_: set[int],
             loader: yaml.SafeLoader) -> Located:
    """`done` holds the nodes converted so far: an alias is the node it names, converted once; `open_` the
    nodes being converted, so an alias inside its own anchor is found."""
    if id(node) in done:
        return done[id(node)]
    line = node.start_mark.line + 1
    if id(node) in open_:
        raise InputError("an alias refers to a node that contains it", path, line)
    open_.add(id(node))
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Located] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError("expected a plain key", path, key_node.start_mark.line + 1)
            if key in out:
                raise InputError(f"duplicate key '{key}'", path, key_node.start_mark.line + 1)
            out[key] = _convert(value_node, path, done, open_, loader)
        result = Located(out, line, path)
    elif isinstance(node, yaml.SequenceNode):
        result = Located([_convert(item, path, done, open_, loader) for item in node.value], line, path)
    else:
        result = Located(_construct_scalar(node, path, line, loader), line, path)
    open_.discard(id(node))
    done[id(node)] = result
    return result


def _construct_scalar(node: yaml.ScalarNode, path: str, line: int, loader: yaml.SafeLoader) -> Any:
    try:
        return loader.construct_object(node, deep=True)
    except yaml.MarkedYAMLError as exc:  # an unknown or unsafe tag, undecodable !!binary, ...
        raise InputError(f"invalid YAML value {node.value!r}: {exc.problem}", path, line) from None
    except ValueError as exc:  # a tagged or date-like scalar its constructor rejects: !!int x, 2001-13-45
        raise InputError(f"invalid YAML value {node.value!r}: {exc}", path, line) from None


# libyaml's composer (when PyYAML has it) takes 0.5-1.3 ms for microcode/harts.yaml where PyYAML's own takes 7-9 ms,
# which every run pays for its microprogram. Its nodes are the same (tests/test_start.py), but its messages for
# bad input are not, so a document it refuses is composed again by PyYAML for the message.
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def _compose(text: str) -> yaml.Node | None:
    if _FAST_LOADER is not None:
        try:
            return yaml.compose(text, Loader=_FAST_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def load_located(path: str | Path) -> Located:
    """Parse a YAML file into :class:`Located` values; any failure is an :class:`InputError`."""
    path = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", path) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", path,
                         data[:exc.start].count(b"\n") + 1) from None
    try:
        node = _compose(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise InputError(f"invalid YAML: {exc.problem}", path, line) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, such as NUL
        raise InputError(f"invalid YAML: {exc.reason} (#x{exc.character:04x})", path,
                         text[:exc.position].count("\n") + 1) from None
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", path) from None
    if node is None:
        raise InputError("file is empty, expected a YAML mapping", path, 1)
    try:
        return _converted(node, path)
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply", path) from None
