import atexit, sys
def bye(who):
    print("bye", who)
    sys.stderr.write("stderr bye %s\n" % who)
atexit.register(bye, "first")
atexit.register(bye, "second")
print("main done")
