"""Built-in codelets: the vertex types library ops use, each with a batched compute.

Codelet classes are made per operation and element type (``popops::BinaryOp1D<ADD,float>``)
and registered by their Poplar-style type name (``ipu_engine.poplar.codelet_registry``), so
graphs find them without ``add_codelets``.
"""

from ipu_engine.poplar.codelet_registry import builtin_codelet, builtin_codelets, register_builtin

__all__ = ["builtin_codelet", "builtin_codelets", "register_builtin"]
