# issue 35: the class of an object start-up made (os.environ) given a base
# with a finaliser
import collections.abc
import os


class Noisy:
    def __del__(self, write=os.write, leave=os._exit):
        write(1, b"os.environ finalised\n")
        leave(7)


os._Environ.__bases__ = (collections.abc.MutableMapping, Noisy)
print("body")
