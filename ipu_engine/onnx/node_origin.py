"""Where an ONNX node came from in the exporter's source: the module path and the Python line.

torch's dynamo exporter stores them in each node's ``metadata_props``:
``pkg.torch.onnx.name_scopes`` (the ``repr`` of the cumulative module paths, ``['',
'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d']``: the root, each module, then the op's
own name), ``pkg.torch.onnx.class_hierarchy`` (their classes) and
``pkg.torch.onnx.stack_trace`` (a traceback, outermost frame first). torch's TorchScript
exporter writes the stack into the node's ``doc_string`` instead (``path.py(12): forward``
lines, innermost first). The user's line is the innermost frame outside torch's own package.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import onnx

NAME_SCOPES = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY = "pkg.torch.onnx.class_hierarchy"
STACK_TRACE = "pkg.torch.onnx.stack_trace"

_TRACEBACK_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)', re.MULTILINE)
_TORCHSCRIPT_FRAME = re.compile(r"^\s*(?P<file>\S[^\n]*?\.py)\((?P<line>\d+)\):", re.MULTILINE)
# a frame of torch itself (site-packages/torch/nn/modules/conv.py, torch/_dynamo/...)
_TORCH_FRAME = re.compile(r"(^|[/\\])torch[/\\]")


@dataclass(frozen=True)
class NodeOrigin:
    """The module scopes a node was exported from (outermost first, each the module's own
    part of its path: ``('layer1', '0', 'conv1')``), the user's line, and what the report's
    framework op records of it."""

    modules: tuple[str, ...] = ()
    location: tuple[str, int] | None = None
    args: dict[str, str] = field(default_factory=dict)


def node_origin(node: onnx.NodeProto) -> NodeOrigin:
    """``node``'s module scopes, source line and metadata, from whatever the exporter left."""
    props = {p.key: p.value for p in node.metadata_props}
    paths = _string_list(props.get(NAME_SCOPES))
    module_paths = paths[:-1]  # the last entry is the op's own name
    modules = tuple(_own_parts(module_paths))
    location = _user_frame(props.get(STACK_TRACE, ""), innermost_first=False) or _user_frame(
        node.doc_string, innermost_first=True
    )
    args: dict[str, str] = {}
    if module_paths and module_paths[-1]:
        args["module"] = module_paths[-1]
    classes = _string_list(props.get(CLASS_HIERARCHY))
    if len(classes) >= 2:
        args["module_class"] = classes[-2]
    if location is not None:
        args["source"] = f"{location[0]}:{location[1]}"
    return NodeOrigin(modules, location, args)


def _string_list(text: str | None) -> list[str]:
    """A ``repr`` of a list of strings as the list; anything else as none."""
    if not text:
        return []
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        return []
    return list(value)


def _own_parts(paths: list[str]) -> list[str]:
    """Each module's own part of its cumulative path ('layer1.0' after 'layer1' is '0'),
    usable as a name scope (no '/'); the root ('') is left out."""
    parts, previous = [], ""
    for path in paths:
        if not path:
            continue
        own = path[len(previous) + 1 :] if previous and path.startswith(previous + ".") else path
        own = own.replace("/", ".").strip(".")
        if own:
            parts.append(own)
        previous = path
    return parts


def _user_frame(text: str, innermost_first: bool) -> tuple[str, int] | None:
    """The innermost frame of a stack ``text`` outside torch's own package (or the innermost
    frame when every one is torch's), None when ``text`` holds no frame."""
    pattern = _TORCHSCRIPT_FRAME if innermost_first else _TRACEBACK_FRAME
    frames = [(m["file"].strip(), int(m["line"])) for m in pattern.finditer(text or "")]
    if not innermost_first:
        frames.reverse()
    if not frames:
        return None
    users = [f for f in frames if not _TORCH_FRAME.search(f[0])]
    return (users or frames)[0]
