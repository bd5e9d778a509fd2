import atexit
atexit.register(print, "handler")
atexit._run_exitfuncs()
print("still running after the handlers ran")
