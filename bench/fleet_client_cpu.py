#!/usr/bin/env python3
"""The Python client's CPU per job through a fleet (issue 39 targets <= 0.2 ms):
time.process_time() of this process over N trivial jobs (`true`, raw step),
16 in flight, through a single-daemon Client (reference), Client(endpoints=)
and AsyncClient(endpoints=) over two private daemons (--jobs 2 each) on
private sockets. Prints figures; asserts nothing. Run from the source tree
with a build's bin dir:

    SURGEBOX_BIN_DIR=build/bin unshare --mount --propagation private --pid \\
        --fork --mount-proc python3 bench/fleet_client_cpu.py [N]
"""
import asyncio
import os
import sys
import time

