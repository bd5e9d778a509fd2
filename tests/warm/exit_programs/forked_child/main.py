import os, sys
pid = os.fork()
if pid == 0:
    print("child", end="")
    sys.exit(7)
_, st = os.waitpid(pid, 0)
print(" parent saw", os.waitstatus_to_exitcode(st) if hasattr(os, "waitstatus_to_exitcode") else st >> 8)
