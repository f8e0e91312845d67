"""The tables' names, without pyarrow: what the CLI lists in its help before any table is
made (``schema.py`` gives their columns)."""

TABLES = ("reports", "runs", "operations", "tile_memory", "liveness_steps", "program_steps")
