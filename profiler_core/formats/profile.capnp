# profile.pop: one Cap'n Proto message (standard unpacked stream framing) whose root is
# `Profile`. Bulk data are `Array`s: raw little-endian, C-contiguous numpy arrays.
#
# Versioning: `magic`, `formatMajor` and `formatMinor` keep their ordinals @0..@2 forever,
# so any reader can check them before it reads anything else. A reader refuses a major
# version it does not know; a minor version only adds fields (new ordinals at the end of a
# struct), which older readers ignore.

@0x85fbdcb3275ea2c3;

struct Profile {
  magic @0 :Text;  # always "popvision-py profile"
  formatMajor @1 :UInt16;
  formatMinor @2 :UInt16;
  header @3 :Header;
  target @4 :Target;
  graph @5 :Graph;
  memory @6 :Memory;
  programs @7 :Programs;
  liveness @8 :Liveness;
  execution :union {
    notRun @9 :Void;  # compiled but never run: no execution profile
    profile @10 :Execution;
  }
  # 1.2: an CRC-32 of each section's decoded content (profile_pop/checksums.py), so a file
  # damaged after writing is refused section by section (absent in older files).
  checksums @11 :List(SectionChecksum);
  # 1.3: the graph's counts (GraphData.counts), checksummed alone, so a first page shows them
  # without decoding the graph's columns (absent in older files: counted from the graph).
  graphCounts @12 :GraphCounts;
  # 1.5: lightweight profiling (profile_pop/blocks.py): every execution of each timed Block
  # and StreamCopy, checksummed alone; absent when it was off (and in older files).
  blocks @13 :Blocks;
}

# Field names are the camelCase of BlocksData's; see profiler_core/model/profile.py.
struct Blocks {
  strings @0 :Strings;  # names of blocks and runs
  tile @1 :UInt32;  # the tile of each IPU that times blocks (profiler.blocks.tile)
  blockName @2 :Array;  # int32 (blocks)
  blockKind @3 :Array;  # uint8 kinds.BlockKind
  blockNode @4 :Array;  # int32 program tree node, -1 for none
  runProgram @5 :Array;  # int32 (runs)
  runName @6 :Array;  # int32
  runStart @7 :Array;  # int64 cycle counter at the run's start
  runCycles @8 :Array;  # int64
  execBlock @9 :Array;  # int32 (executions)
  execRun @10 :Array;  # int32
  execIpu @11 :Array;  # int32
  execTile @12 :Array;  # int32
  execDepth @13 :Array;  # int32
  execStart @14 :Array;  # int64 cycle counter
  execEnd @15 :Array;  # int64 cycle counter, >= execStart
}

struct GraphCounts {
  variables @0 :Int64;  # not counting constants
  constants @1 :Int64;
  vertices @2 :Int64;
  edges @3 :Int64;  # -1 when not recorded
  computeSets @4 :Int64;
  codelets @5 :Int64;
}

struct SectionChecksum {
  section @0 :Text;  # "header", "target", "strings", "graph", ... "execution"
  crc32 @1 :UInt64;
}

# A numpy array: `dtype` is numpy's `dtype.str` ("<i8", "|u1", "|b1", ...), `shape` its
# dimensions and `data` its bytes, little-endian and C-contiguous.
struct Array {
  dtype @0 :Text;
  shape @1 :List(UInt64);
  data @2 :Data;
}

# A table of UTF-8 strings: string i is blob[offsets[i]:offsets[i + 1]].
struct Strings {
  blob @0 :Data;
  offsets @1 :Array;  # int64, one more than the number of strings
}

struct Option {
  key @0 :Text;
  value @1 :Text;
}

struct Header {
  producer @0 :Text;
  producerVersion @1 :Text;
  programName @2 :Text;
  createdUnix @3 :Float64;
  reportId @4 :Text;  # also in debug.cbor, so a mismatched pair is detected
  options @5 :List(Option);  # engine options as given
  outOfMemory @6 :Bool;
  # 1.1: what ran on top of the engine (framework, model kind, pipeline stages, replicas),
  # and the instrumentation level ("" and empty in 1.0 files).
  framework @7 :List(Option);
  instrumentation @8 :Text;
  # The absolute paths of the host traces (.pvti) the process was writing while the engine
  # compiled and ran, so a viewer finds them wherever PVTI_OPTIONS put them (empty in older
  # files and when tracing was off).
  traces @9 :List(Text);
}

struct Target {
  version @0 :Text;  # "ipu1", "ipu2", ...
  numIpus @1 :UInt32;
  tilesPerIpu @2 :UInt32;
  bytesPerTile @3 :UInt64;
  clockHz @4 :Float64;
  # 1.1: "IPU Model" or "IPU" (hardware); replicas of the program and IPUs of each
  # (0 in 1.0 files: one replica over every IPU).
  type @5 :Text;
  replicas @6 :UInt32;
  ipusPerReplica @7 :UInt32;
}

# Field names are the camelCase of GraphData's; see profiler_core/model/profile.py.
struct Graph {
  strings @0 :Strings;
  varName @1 :Array;
  varType @2 :Array;
  varElements @3 :Array;
  varBytes @4 :Array;
  varIsConstant @5 :Array;
  varAlwaysLive @6 :Array;
  varDebug @7 :Array;
  varShapeOffsets @8 :Array;
  varShapeDims @9 :Array;
  regionVar @10 :Array;
  regionTile @11 :Array;
  regionStart @12 :Array;
  regionElements @13 :Array;
  csName @14 :Array;
  csDebug @15 :Array;
  vtName @16 :Array;
  vtCodeBytes @17 :Array;
  vtSupervisor @18 :Array;
  vcCs @19 :Array;
  vcType @20 :Array;
  vcTile @21 :Array;
  vcCount @22 :Array;
  vcFlops @23 :Array;
  # 1.1: the graph's edges (-1 unknown) and each vertex type's instance state bytes
  # (absent in 1.0 files).
  numEdges @24 :Int64 = -1;
  vtStateBytes @25 :Array;
  # After 1.4 (additive): the debug context of the op that added each vertex-count row's
  # vertices (rows per compute set, type, tile and context); absent in older files.
  vcDebug @26 :Array;
}

struct Memory {
  byCategory @0 :Array;  # int64 (categories, tiles)
  interleaved @1 :Array;  # int64 (tiles,)
}

struct Programs {
  nodeKind @0 :Array;
  nodeName @1 :Array;
  nodeParent @2 :Array;
  nodeStep @3 :Array;
  nodeCount @4 :Array;
  nodeDebug @5 :Array;
  nodeFunction @6 :Array;
  roots @7 :Array;
  stepKind @8 :Array;
  stepName @9 :Array;
  stepCs @10 :Array;
  stepDebug @11 :Array;
  stepNode @12 :Array;
  stepCycles @13 :Array;  # int64 (steps, IPUs)
  stepGlobalBytes @14 :Array;
  exchStep @15 :Array;
  exchTile @16 :Array;
  exchBytesIn @17 :Array;
  exchBytesOut @18 :Array;
  cstCs @19 :Array;
  cstTile @20 :Array;
  cstCycles @21 :Array;
  csBusyCycles @22 :Array;
}

struct Liveness {
  alwaysLiveBytes @0 :Int64;
  stepLiveBytes @1 :Array;
  intervalVar @2 :Array;
  intervalFirst @3 :Array;
  intervalLast @4 :Array;
}

struct Run {
  program @0 :Int32;
  name @1 :Text;
  stepIds @2 :Array;
  startCycles @3 :Array;
  totalCycles @4 :Int64;
}

struct Execution {
  runs @0 :List(Run);
}
