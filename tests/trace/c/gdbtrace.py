"""What the C/C++ trace tests share (test_c.py, hostile.py): one request over
the daemon's socket, and why a test cannot run here."""
import json
import os
import shutil
import socket


def request(sock, req):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall((json.dumps(req) + "\n").encode())
    f = s.makefile("rb")
    line = f.readline()
    s.close()
    return json.loads(line)


def skip_reason(toolchain):
    if os.geteuid() != 0:
        return "the daemon's jobs need root here (uid range, cgroups)"
    if not os.access("/usr/bin/gdb", os.X_OK):
        return "no /usr/bin/gdb (apt-get install gdb)"
    if not shutil.which(toolchain):
        return "no %s" % toolchain
    return None
