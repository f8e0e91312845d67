"""The Poplar tutorials, ported, print what the tutorials print."""

import runpy
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "resources" / "examples"


def run_example(name: str, capsys) -> str:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_tutorial1_prints_copies_fifo_chunks_and_host_read(capsys):
    out = run_example("tutorial1_variables.py", capsys)
    lines = out.splitlines()
    assert "v1-debug: {1,1.5,2,2.5}" in lines
    assert "v2-debug: {1,1.5,2,2.5}" in lines
    # a 30-int circular buffer fed 10 at a time: first 0..9, then 10..19
    assert "v4-0: {0,1,2,3,4,5,6,7,8,9}" in lines
    assert "v4-1: {10,11,12,13,14,15,16,17,18,19}" in lines
    h3 = lines[lines.index("h3 data:") + 1 : lines.index("h3 data:") + 5]
    assert [row.split() for row in h3] == [
        ["0", "0", "0", "0"],
        ["0", "1", "1.5", "2"],
        ["0", "0", "0", "0"],
        ["0", "0", "0", "0"],
    ]


def test_tutorial2_adds_with_popops_including_a_transposed_view(capsys):
    out = run_example("tutorial2_popops.py", capsys).splitlines()
    assert out == [
        "v3: {{5,4.5},{4,3.5}}",
        "v4: {{9,7.5},{6,4.5}}",
        "v5: {{5,3.5},{5,3.5}}",
    ]
