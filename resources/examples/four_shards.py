"""A model sharded over 4 IPUs: o1=a+b on IPU 0, o2=a+c on 1, o3=b+c on 2, o1+o2+o3 on 3.

``with ipu_engine.shard(i):`` places the ops inside on IPU i; the inputs and partial sums
that another IPU needs travel over the IPU-Links, which the report shows as global
exchange. The engine program is called "four_shards".
"""

import numpy as np

import ipu_engine


def four_shards(a, b, c):
    with ipu_engine.shard(0):
        o1 = a + b
    with ipu_engine.shard(1):
        o2 = a + c
    with ipu_engine.shard(2):
        o3 = b + c
    with ipu_engine.shard(3):
        return o1 + o2 + o3


def main(argv: list[str] | None = None) -> np.ndarray:
    a = np.array([1, 1], dtype=np.float32)
    b = np.array([0, 1], dtype=np.float32)
    c = np.array([1, 5], dtype=np.float32)
    result = ipu_engine.compile(four_shards, [a, b, c], num_ipus=4, name="four_shards")
    print(f"o1 + o2 + o3 over 4 IPUs = {result.tolist()}")
    return result


if __name__ == "__main__":
    main()
