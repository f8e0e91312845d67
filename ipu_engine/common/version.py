"""The engine's version: reports name it as their producer, executable cache keys hold it."""

__version__ = "0.1.0"
