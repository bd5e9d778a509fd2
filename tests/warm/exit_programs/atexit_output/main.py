import atexit, sys
atexit.register(print, "first registered, runs last")
atexit.register(lambda: sys.stdout.write("buffered at exit"))
print("body")
