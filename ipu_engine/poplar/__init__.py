"""Poplar, the core: the target and device, the graph (variables, constants, tensors, tile
mapping, compute sets of vertices, streams), programs, and the engine that compiles,
loads and runs them. ``compiler/`` lowers programs into steps, ``cost_model/`` gives
their cycles, memory, exchanges and liveness, and ``report/`` writes autoReport
folders through profiler_core's writers. The public names are ``ipu_engine``'s own.
"""
