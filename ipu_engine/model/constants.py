"""Every number of the IPU model in one place, with where it comes from.

Sources: Graphcore's "IPU Programmer's Guide" (tiles, worker contexts, exchange),
"Dissecting the Graphcore IPU Architecture via Microbenchmarking" (Jia et al., 2019,
Citadel: latencies and bandwidths measured on Mk1), the GC200 product brief (Mk2: 1472
tiles, 900 MB In-Processor-Memory, 250 TFLOPS FP16, 62.5 TFLOPS FP32, 47.5 TB/s memory,
8 TB/s all-to-all exchange) and the PopLibs cycle estimators' orders of magnitude.
Where a figure is our own estimate it says so.
"""

from __future__ import annotations

# -- compute ---------------------------------------------------------------------------
WORKER_CONTEXTS = 6
"""Hardware threads per tile that run vertices, in a barrel: each issues every 6th cycle
(IPU Programmer's Guide, "Tile architecture")."""

MACS_PER_CYCLE = {"float": 16, "half": 64}
"""Multiply-accumulates per tile per cycle of the AMP unit, from the GC200 brief:
250e12 FLOPS fp16 / (1472 tiles x 1.33e9 Hz) = 128 FLOPs = 64 MACs; fp32 a quarter of it."""

VERTEX_OVERHEAD_CYCLES = 30
"""Cycles a worker spends entering a vertex and reading its state (our estimate, in line
with PopLibs estimators' constant terms of 20-50 cycles)."""

SUPERVISOR_OVERHEAD_CYCLES = 100
"""A supervisor vertex starting its six workers and waiting for them (our estimate)."""

# -- exchange ---------------------------------------------------------------------------
EXCHANGE_BYTES_PER_CYCLE = 4
"""Bytes a tile receives per cycle in an on-IPU exchange: 8 TB/s / 1472 tiles / 1.33 GHz
= 4.1 bytes (GC200 brief); Jia et al. measured the same order on Mk1."""

EXCHANGE_LATENCY_CYCLES = 32
"""Fixed cost of an exchange phase: instruction fetch and the longest wire (our estimate;
Jia et al. report tile-to-tile latencies of tens of cycles)."""

IPU_LINK_BYTES_PER_CYCLE = 32
"""Bytes per cycle between IPUs over IPU-Links: 320 GB/s per Mk2 IPU / 1.33 GHz / 8 links
in use at once (GC200 brief), shared by the tiles sending."""

GLOBAL_EXCHANGE_LATENCY_CYCLES = 700
"""Fixed cost of crossing IPU-Links (our estimate from Jia et al.'s ~0.5 us link latency)."""

SYNC_CYCLES = 60
"""On-IPU barrier sync of all tiles (Jia et al.: tens of cycles on Mk1)."""

GLOBAL_SYNC_CYCLES = 1_000
"""Sync across IPUs through the sync network (Jia et al.: ~0.5-1 us)."""

HOST_BYTES_PER_SECOND = 16e9
"""PCIe Gen4 x16 host link, ~16 GB/s per direction (IPU-M2000 brief: 2 x 100 GbE host
links, ~25 GB/s; we use the PCIe figure of the C600/IPU-POD setups)."""

STREAM_COPY_LATENCY_CYCLES = 2_000
"""Host sync and DMA set-up for a stream copy (our estimate: ~1.5 us)."""

# -- memory -----------------------------------------------------------------------------
DATA_ALIGNMENT = 8
"""Bytes a variable's region on a tile is aligned to: 64-bit loads need 8-byte alignment
(IPU Programmer's Guide, "Memory architecture")."""

INTERLEAVED_BYTES = {"ipu1": 192 * 1024, "ipu2": 496 * 1024, "bow": 496 * 1024}
"""Size of the interleaved region of tile memory (our model: the top of the tile; the
rest is non-interleaved, where code must live, as the Graph Analyser's memory report
describes). Data fills the interleaved region first and spills into the other."""

VERTEX_DESCRIPTOR_BYTES = 4
"""Each vertex has a pointer in its compute set's vertex list on its tile."""

EDGE_DESCRIPTOR_BYTES = 8
"""Each edge of a vector of edges has a pointer and a count (SPAN layout)."""

COMPUTE_SET_LIST_BYTES = 8
"""Header of a compute set's vertex list on a tile that runs it."""

CONTROL_CODE_BASE_BYTES = 256
CONTROL_CODE_PER_STEP_BYTES = 8
"""Every tile runs the control program: a fixed part plus instructions per program step
(our estimate, in line with Poplar's control code growing with the number of steps)."""

CONTROL_CODE_PER_COMPUTE_BYTES = 12
"""Extra instructions on a tile to start its vertices for one compute step."""

EXCHANGE_CODE_PER_STEP_BYTES = 24
EXCHANGE_CODE_PER_PACKET_BYTES = 4
EXCHANGE_PACKET_BYTES = 256
"""Exchange code on a tile taking part in an exchange: set-up instructions, plus a
send or receive instruction per packet of data (our estimate)."""

HOST_EXCHANGE_CODE_BYTES = 32
"""Per stream copy, on each tile the copied tensor lives on."""

HOST_PACKET_HEADER_BYTES = 8
"""Host exchange packet headers, one per 256-byte packet, kept in tile memory."""

SUPERVISOR_STACK_BYTES = 128
"""Supervisor stack on every tile (our estimate)."""

INSTRUMENTATION_BYTES_PER_STEP = 8
"""With instrumentation on, a tile keeps a 64-bit cycle count for each compute or exchange
step it takes part in."""
