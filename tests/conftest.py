"""Test configuration shared by every test: Qt runs offscreen, never on a real screen."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Reports and traces are only written where a test asks for them.
os.environ.pop("POPLAR_ENGINE_OPTIONS", None)
os.environ.pop("PVTI_OPTIONS", None)
