"""The report model: what a profile holds, as numpy columns. Readers build it, the engine
fills it for the writers, analyses read it."""
