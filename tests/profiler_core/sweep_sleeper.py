"""A sweep's stand-in program for the interrupt tests: prints its pid, then sleeps argv[1]
seconds times $SLEEP_SCALE (default 1); writes no report."""

import os
import sys
import time

print(os.getpid(), flush=True)
time.sleep(float(sys.argv[1]) * float(os.environ.get("SLEEP_SCALE", "1")))
print("slept", flush=True)
