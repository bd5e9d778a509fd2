# issue 35: a finaliser added to a metaclass of start-up's classes
# (abc.ABCMeta: classes in reference cycles, which only the collector frees),
# and every atexit handler cleared (the short exit's own too): the teardown
# still finalises them as cold
import abc
import atexit
import os


def fin(cls, write=os.write, leave=os._exit):
    write(1, b"an ABC finalised\n")
    leave(7)


abc.ABCMeta.__del__ = fin
atexit._clear()
print("body")
