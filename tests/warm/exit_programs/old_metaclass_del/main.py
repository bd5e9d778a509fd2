# issue 35: a finaliser added to a metaclass whose classes start-up made
# (abc.ABCMeta: collections.abc's, os.PathLike); they sit in reference
# cycles, which only the collector frees at a cold teardown
import abc
import os


def fin(cls, write=os.write, leave=os._exit):
    write(1, b"an ABC finalised\n")
    leave(7)


abc.ABCMeta.__del__ = fin
print("body")
