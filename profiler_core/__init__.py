"""profiler_core: the file formats, report and trace models, analyses, pva API and CLI.

It imports neither Qt nor ipu_engine: it is the one owner of every file format.
"""
