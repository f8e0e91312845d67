"""Every number of the IPU model in one place, with where it comes from.

Sources: Graphcore's "IPU Programmer's Guide" (tiles, worker contexts, exchange),
"Dissecting the Graphcore IPU Architecture via Microbenchmarking" (Jia et al., 2019,
Citadel: latencies and bandwidths measured on Mk1), the GC200 product brief (Mk2: 1472
tiles, 900 MB In-Processor-Memory, 250 TFLOPS FP16, 62.5 TFLOPS FP32, 47.5 TB/s memory,
8 TB/s all-to-all exchange) and the PopLibs cycle estimators' orders of magnitude.
Where a figure is our own estimate it says so.
"""

from __future__ import annotations

# Calibration source. TUT6 = Poplar tutorial 6, "Matrix-vector Multiplication
# Optimisation", README.md, graphcore/examples, tutorials/tutorials/poplar/
# tut6_matrix_vector_opt/README.md (https://github.com/graphcore/examples/tree/v3.2.0/
# tutorials/tutorials/poplar/tut6_matrix_vector_opt). Its ``./tut6 10000 1000`` run prints
# the IPU Model's execution summary (Mk2, minIPUSyncDelay 0, relativeSyncDelay NO_DELAY):
#   total 6,681,766 cycles; tile average compute 3,801.8 (incl. idle threads),
#   3,717.6 (excl.); IPU exchange 8,697.4; global exchange 0; host exchange 6,663,550.8;
#   sync 1,134.8
# and the same program's hardware profile: total 25,444,984; compute 28,300.3; IPU
# exchange 8,743.1; host exchange 2,641,488.4; sync 135,849.6.
# The program streams 40,044,000 bytes (a 10000x1000 float matrix, a 1000 float vector
# in, a 10000 float vector out). benchmarks/bench_calibration.py reruns it.

# -- compute ---------------------------------------------------------------------------
WORKER_CONTEXTS = 6
"""Hardware threads per tile that run vertices, in a barrel: each issues every 6th cycle
(IPU Programmer's Guide, "Tile architecture"). Vertices are dealt whole to the contexts
and a tile takes six times its busiest context's cycles: TUT6's own estimate
(``ceilDiv(vertices, numWorkers) * numWorkers * cyclesPerVertex``) and its 3,801.8-cycle
"including idle threads" figure, which this rule reproduces to 0.3%."""

MACS_PER_CYCLE = {"float": 16, "half": 64}
"""Multiply-accumulates per tile per cycle of the AMP unit, from the GC200 brief:
250e12 FLOPS fp16 / (1472 tiles x 1.33e9 Hz) = 128 FLOPs = 64 MACs; fp32 a quarter of it."""

AMP_MACS_PER_CYCLE = {
    ("float", "float"): MACS_PER_CYCLE["float"],
    ("half", "float"): MACS_PER_CYCLE["half"] // 2,
    ("half", "half"): MACS_PER_CYCLE["half"],
}
"""The AMP's rate by (input type, partials type): the GC200's 64 MACs are fp16.16 (half
partials); accumulating half products in float uses half the conv units (PopLibs' device
model: 8 fp16-accumulating vs 4 fp32-accumulating conv units per tile), so 32."""

VERTEX_OVERHEAD_CYCLES = 30
"""Cycles a worker spends entering a vertex and reading its state (our estimate, in line
with PopLibs estimators' constant terms of 20-50 cycles)."""

SUPERVISOR_OVERHEAD_CYCLES = 100
"""A supervisor vertex starting its six workers and waiting for them (our estimate)."""

# -- exchange ---------------------------------------------------------------------------
EXCHANGE_BYTES_PER_CYCLE = 4
"""Bytes a tile receives per cycle in an on-IPU exchange: Poplar's
``Target::getExchangeBytesPerCycle()``, which TUT6's planner reads; 8 TB/s / 1472 tiles /
1.33 GHz = 4.1 bytes (GC200 brief). With the stream rearrangement below (at
``REARRANGE_EXCHANGE_EFFICIENCY`` of it) it reproduces TUT6's 8,697.4 IPU exchange cycles."""

REARRANGE_EXCHANGE_EFFICIENCY = 0.825
"""Streamed data put in place after a host copy (``REARRANGE_STREAMED_DATA``) moves at
this share of the exchange's bytes per cycle: 3.3 bytes a cycle, measured. TUT6's hardware
profile -- a measurement, not an estimate -- shows 8,743.1 IPU exchange cycles; less its
vertices' own exchanges as modelled (317 + 81 cycles) and one exchange latency (32), the
rearrangement of its matrix takes 8,313 cycles for the 27,456 bytes its busiest tile moves:
3.30 bytes a cycle. Each tile sends to and receives from ~48 others in it, where the
vertices' exchanges (and the halo exchange of the second calibration program) are
neighbour-to-neighbour and keep the full rate. Its IPU Model figure (8,697.4) agrees."""

EXCHANGE_LATENCY_CYCLES = 32
"""Fixed cost of an exchange phase: instruction fetch and the longest wire (our estimate;
Jia et al. report tile-to-tile latencies of tens of cycles)."""

IPU_LINK_BYTES_PER_CYCLE = 32
"""Bytes per cycle between IPUs over IPU-Links: 320 GB/s per Mk2 IPU / 1.33 GHz / 8 links
in use at once (GC200 brief), shared by the tiles sending. No tutorial figure: TUT6 runs
on one IPU (its global exchange is 0)."""

GLOBAL_EXCHANGE_LATENCY_CYCLES = 700
"""Fixed cost of crossing IPU-Links (our estimate from Jia et al.'s ~0.5 us link latency)."""

# -- sync -------------------------------------------------------------------------------
SYNC_CYCLES = 124
"""On-IPU barrier sync of all tiles with no extra delay (minIPUSyncDelay 0, NO_DELAY),
fitted to TUT6: 1,134.8 tile-average sync cycles, less ~18 cycles of tiles waiting for
slower ones, over the nine syncs of its program as we lower it (a sync before each
exchange and host copy, and the end of each of its three stream copies) = 124."""

RELATIVE_SYNC_DELAY_CYCLES = 150
"""With ``relativeSyncDelay`` AUTO (the IPU Model's default) a sync also waits for the
spread of the tiles' arrival at the sync controller (our estimate: tens of cycles per
column of tiles; TUT6 turns it off to get "more simplistic" exchange timing)."""

GLOBAL_SYNC_CYCLES = 1_000
"""Sync across IPUs through the sync network (Jia et al.: ~0.5-1 us). Only where a step
spans IPUs: a single-IPU program never pays it."""

HOST_SYNC_CYCLES = {"ipu_model": SYNC_CYCLES, "ipu_hardware": 44_600}
"""The sync before a stream copy. The IPU Model charges an ordinary sync; on hardware the
tiles wait for the host: TUT6's hardware profile shows 135,849.6 sync cycles for its three
stream copies: (135,849.6 less 1,662 of other syncs and waiting) / 3, less the 150-cycle
relative sync delay its hardware run has = 44,600 each (fitted)."""

# -- host -------------------------------------------------------------------------------
HOST_BYTES_PER_SECOND = {"ipu_model": 8.0e9, "ipu_hardware": 20.2e9}
"""Host link bandwidth. IPU Model: TUT6 streams 40,044,000 bytes in 6,663,550.8 host
exchange cycles at 1.33 GHz = 7.99 GB/s. Hardware: the same bytes in 2,641,488.4 cycles =
20.2 GB/s (PCIe Gen4 x16 is ~25 GB/s raw)."""

STREAM_COPY_LATENCY_CYCLES = 1_400
"""StreamCopyBegin on the IPU Model: DMA set-up of a stream copy. TUT6's total minus its
listed categories leaves 4,581 cycles for its three stream copies' begin and end steps."""

HOST_PREPARE_CYCLES_PER_BYTE = {"ipu_model": 0.0, "ipu_hardware": 0.565}
"""On hardware, StreamCopyBegin also waits while the host prepares the data: TUT6's
hardware total less its listed categories is 22,630,603 cycles for 40,044,000 bytes."""

REARRANGE_STREAMED_DATA = True
"""Data streamed from the host lands on the destination tensor's tiles in stream order,
an even block per tile; elements whose tile differs from the tensor's mapping then move in
an on-IPU exchange. TUT6's matrix is mapped by column segment, not row-major, and its
IPU exchange (8,697.4 cycles) is ~40x what its vertices' own exchanges need (its planner
estimates 192): the rearrangement is the rest."""

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
