"""Poplar tutorial 1 (programs and variables), ported to ipu_engine.

Variables and constants on tiles, copies between them, a host write/read handle and a
host-to-device FIFO fed from a circular buffer of 30 ints, 10 at a time.
"""

import numpy as np

from ipu_engine import FLOAT, INT, Copy, Engine, Graph, IPUModel, PrintTensor, Sequence


def main() -> None:
    device = IPUModel().create_device()
    target = device.target
    graph = Graph(target)

    v1 = graph.add_variable(FLOAT, [4], "v1")
    v2 = graph.add_variable(FLOAT, [4], "v2")
    v3 = graph.add_variable(FLOAT, [4, 4], "v3")
    v4 = graph.add_variable(INT, [10], "v4")

    graph.set_tile_mapping(v1, 0)
    for i in range(4):
        graph.set_tile_mapping(v2[i], i)
    graph.set_tile_mapping(v3, 0)
    graph.set_tile_mapping(v4, 0)

    prog = Sequence()
    c1 = graph.add_constant(FLOAT, [4], [1.0, 1.5, 2.0, 2.5], "c1")
    graph.set_tile_mapping(c1, 0)
    prog.add(Copy(c1, v1))
    prog.add(PrintTensor("v1-debug", v1))
    prog.add(Copy(v1, v2))
    prog.add(PrintTensor("v2-debug", v2))

    graph.create_host_write("v3-write", v3)
    graph.create_host_read("v3-read", v3)

    v1slice = v1.slice(0, 3)
    v3slice = v3.slice([1, 1], [2, 4])
    prog.add(Copy(v1slice, v3slice))

    in_stream = graph.add_host_to_device_fifo("v4-input-stream", INT, 10)
    prog.add(Copy(in_stream, v4))
    prog.add(PrintTensor("v4-0", v4))
    prog.add(Copy(in_stream, v4))
    prog.add(PrintTensor("v4-1", v4))

    engine = Engine(graph, prog)
    engine.load(device)

    h3 = np.zeros(4 * 4, dtype=np.float32)
    engine.write_tensor("v3-write", h3)

    in_data = np.arange(10 * 3, dtype=np.int32)
    engine.connect_stream("v4-input-stream", in_data)

    print("Running program")
    engine.run(0)
    print("Program complete")

    engine.read_tensor("v3-read", h3)
    print("h3 data:")
    for i in range(4):
        print("  " + " ".join(f"{x:g}" for x in h3[i * 4 : i * 4 + 4]))


if __name__ == "__main__":
    main()
