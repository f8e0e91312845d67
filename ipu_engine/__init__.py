"""ipu_engine: an embedded IPU execution engine in the spirit of Poplar's IPU Model."""
