"""Compare mode's widgets, shared by every view: the A/B legend and banner, and the
comparison tabs (A, B, Δ and % tables) a view adds to its details."""
