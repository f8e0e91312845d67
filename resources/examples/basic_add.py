"""A traced Python function on the IPU: three float[2] inputs a, b, c computing (a+b)+(a+c).

``ipu_engine.compile`` traces the function on placeholders shaped like the inputs, builds
the graph with popops adds, compiles an Engine named "basic_add" and runs it. Run it with
reports on:

    POPLAR_ENGINE_OPTIONS='{"autoReport.all":"true","autoReport.directory":"./report"}' \\
        python resources/examples/basic_add.py
"""

import numpy as np

import ipu_engine


def add_twice(a, b, c):
    return (a + b) + (a + c)


def main(argv: list[str] | None = None) -> np.ndarray:
    a = np.array([1, 1], dtype=np.float32)
    b = np.array([0, 1], dtype=np.float32)
    c = np.array([1, 5], dtype=np.float32)
    result = ipu_engine.compile(add_twice, [a, b, c], name="basic_add")
    print(f"(a + b) + (a + c) = {result.tolist()}")
    return result


if __name__ == "__main__":
    main()
