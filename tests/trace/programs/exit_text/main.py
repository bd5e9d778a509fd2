import sys
def stop():
    raise SystemExit("fatal: text exit")
print("out")
stop()
