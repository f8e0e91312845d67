"""An exported model's PopTorch annotations, written as the ONNX attributes the engine's
importer reads (PopART's): each node's block as ``__ipu_number`` (and ``__pipeline_stage``
when pipelined), ``set_available_memory`` as ``__available_memory_proportion`` on the
matmul or convolution that made the tensor, and ``ipu_print_tensor`` as an extra output.

An ONNX node is found from its FX node through the exporter's metadata: the last entry of
``pkg.torch.onnx.name_scopes`` is the FX node's name.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import onnx
from onnx import helper

from ipu_engine.common.errors import EngineError
from ipu_engine.poptorch.ops import Marker

__all__ = ["PLANNED_OPS", "Print", "apply_markers", "fx_name", "place_nodes"]

#: The operations whose plan ``availableMemoryProportion`` steers.
PLANNED_OPS = {"MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum"}
MEMORY_ATTRIBUTE = "__available_memory_proportion"

Block = tuple[str | None, int | None]  # (user_id, ipu_id)


@dataclass(frozen=True)
class Print:
    """An ``ipu_print_tensor``: the model output that carries it, and its title."""

    output: str
    title: str


def _metadata(node: onnx.NodeProto) -> dict[str, str]:
    return {p.key: p.value for p in node.metadata_props}


def fx_name(node: onnx.NodeProto) -> str | None:
    """The FX node an exported ONNX node came from, by the exporter's metadata."""
    scopes = _metadata(node).get("pkg.torch.onnx.name_scopes")
    if not scopes:
        return None
    try:
        names = ast.literal_eval(scopes)
    except (ValueError, SyntaxError):
        return None
    return str(names[-1]) if isinstance(names, list) and names else None


def _where(node: onnx.NodeProto) -> str:
    """A node as a person finds it: its name and the module it came from."""
    scopes = _metadata(node).get("pkg.torch.onnx.name_scopes", "")
    try:
        path = ".".join(s for s in ast.literal_eval(scopes)[:-1] if s) if scopes else ""
    except (ValueError, SyntaxError):
        path = ""
    return f"{node.op_type} node {node.name!r}" + (f" (module {path})" if path else "")


def place_nodes(model: onnx.ModelProto, blocks: Mapping[str, Block | None], pipelined: bool) -> int:
    """Give every node the IPU of its block (``blocks``: FX node name -> block); nodes
    outside any block, or made by the exporter, take the IPU of the node before them (IPU
    0 before the first block), as after a PopTorch ``BeginBlock``. Pipelined, each IPU is
    a pipeline stage, which must not go back. Returns the IPUs used; writes nothing when
    the model has no block."""
    nodes = list(model.graph.node)
    found = [blocks.get(fx_name(n) or "") for n in nodes]
    if not any(b is not None for b in found):
        return 1
    ipu, ipus = 0, []
    for block in found:
        if block is not None and block[1] is not None:
            ipu = block[1]
        ipus.append(ipu)
    if pipelined:
        for i in range(1, len(nodes)):
            if ipus[i] < max(ipus[:i]):
                raise EngineError(
                    f"PipelinedExecution: {_where(nodes[i])} runs on IPU {ipus[i]} after "
                    f"IPU {max(ipus[:i])}: pipeline stages (each block's ipu_id) must not go "
                    "back; order the blocks by ipu_id or use "
                    "opts.setExecutionStrategy(poptorch.ShardedExecution())"
                )
    for node, where in zip(nodes, ipus, strict=True):
        for name in ("__ipu_number", "__pipeline_stage"):
            _remove_attribute(node, name)
        node.attribute.append(helper.make_attribute("__ipu_number", where))
        if pipelined:
            node.attribute.append(helper.make_attribute("__pipeline_stage", where))
    return max(ipus) + 1


def _remove_attribute(node: onnx.NodeProto, name: str) -> None:
    keep = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(keep)


def apply_markers(model: onnx.ModelProto, markers: Sequence[Marker]) -> list[Print]:
    """Write the markers met in the export into ``model``; returns the prints, each an
    output added to the model."""
    alias = {m.alias: m.source for m in markers}
    producers = {out: node for node in model.graph.node for out in node.output}
    known = set(producers) | {i.name for i in model.graph.input}
    known |= {t.name for t in model.graph.initializer}

    def resolve(marker: Marker) -> str:
        """The marked value as the optimised model names it: the value itself, what it
        is an identity of, or -- when the exporter's optimiser renamed it to the marker's
        own output (a model output) -- that."""
        name, seen = marker.source, set()
        while name not in known and name in alias and name not in seen:
            seen.add(name)
            name = alias[name]
        return name if name in known or marker.alias not in known else marker.alias

    prints = []
    for marker in markers:
        value = resolve(marker)
        if marker.kind == "memory":
            node = _planned_producer(value, producers)
            if node is not None:
                _remove_attribute(node, MEMORY_ATTRIBUTE)
                node.attribute.append(helper.make_attribute(MEMORY_ATTRIBUTE, float(marker.value)))
        elif value in known:
            prints.append(Print(value, str(marker.value)))
        else:
            raise EngineError(
                f"poptorch.ipu_print_tensor({marker.value!r}): the exported model no longer "
                f"has the tensor it prints ({marker.source!r})"
            )
    _add_outputs(model, [p.output for p in prints])
    return prints


def _planned_producer(
    value: str, producers: Mapping[str, onnx.NodeProto], depth: int = 3
) -> onnx.NodeProto | None:
    """The matmul or convolution that made ``value``: its producer, or the nearest one
    up to ``depth`` operations above it (a Linear on a 3-D input exports as MatMul then
    Add; a bias may follow a convolution); None when there is none (an identity)."""
    frontier = [value]
    for _ in range(depth):
        nodes = [producers[v] for v in frontier if v in producers]
        for node in nodes:
            if node.op_type in PLANNED_OPS:
                return node
        frontier = [i for node in nodes for i in node.input if i]
    return None


def _add_outputs(model: onnx.ModelProto, names: Sequence[str]) -> None:
    """``names`` as extra outputs of the model, typed as shape inference finds them."""
    present = {o.name for o in model.graph.output}
    wanted = [n for n in dict.fromkeys(names) if n not in present]
    if not wanted:
        return
    inferred = onnx.shape_inference.infer_shapes(model)
    typed = {
        v.name: v
        for v in (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output)
    }
    for name in wanted:
        model.graph.output.append(typed.get(name) or helper.make_value_info(name, onnx.TypeProto()))
