"""``profile.pop``: the compile and execution profile as one Cap'n Proto message.

``write_profile`` writes a ``ProfileData`` atomically; ``ProfileReader`` opens a file and
decodes each section on first access; ``read_profile`` decodes all of them at once.
"""

from profiler_core.formats.profile_pop.reader import ProfileReader, read_profile
from profiler_core.formats.profile_pop.schema import MAGIC
from profiler_core.formats.profile_pop.writer import write_profile

__all__ = ["MAGIC", "ProfileReader", "read_profile", "write_profile"]
