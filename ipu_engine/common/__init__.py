"""What every layer of the engine shares and nothing else: the ``EngineError`` family,
the argument checks at the API boundary, Poplar's element types and its log variables.

It is the ground floor: libpvti (``ipu_engine.pvti``) stands on it beside Poplar, so the
engine can trace itself with pvti while pvti imports nothing of Poplar's.
"""
