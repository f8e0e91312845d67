"""``python -m profiler_core.cli``: the same as the ``popvision-cli`` command."""

from profiler_core.cli import main

raise SystemExit(main())
