"""Poplar tutorial 2 (using PopLibs), ported to ipu_engine: popops.add over 2x2 tensors
mapped one element per tile, including a transposed view."""

from ipu_engine import FLOAT, Copy, Engine, Graph, IPUModel, PrintTensor, Sequence, popops


def main() -> None:
    device = IPUModel().create_device()
    graph = Graph(device.target)

    v1 = graph.add_variable(FLOAT, [2, 2], "v1")
    v2 = graph.add_variable(FLOAT, [2, 2], "v2")
    for i in range(2):
        for j in range(2):
            graph.set_tile_mapping(v1[i][j], i * 2 + j)
            graph.set_tile_mapping(v2[i][j], i * 2 + j)

    prog = Sequence()
    c1 = graph.add_constant(FLOAT, [4], [1.0, 1.5, 2.0, 2.5], "c1")
    c2 = graph.add_constant(FLOAT, [4], [4.0, 3.0, 2.0, 1.0], "c2")
    graph.set_tile_mapping(c1, 0)
    graph.set_tile_mapping(c2, 0)
    prog.add(Copy(c1, v1.flatten()))
    prog.add(Copy(c2, v2.flatten()))

    v3 = popops.add(graph, v1, v2, prog, "Add")
    prog.add(PrintTensor("v3", v3))
    v4 = popops.add(graph, v3, v2, prog, "Add")
    prog.add(PrintTensor("v4", v4))
    v5 = popops.add(graph, v1, v2.transpose(), prog, "Add")
    prog.add(PrintTensor("v5", v5))

    engine = Engine(graph, prog)
    engine.load(device)
    engine.run(0)


if __name__ == "__main__":
    main()
