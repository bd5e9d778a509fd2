# issue 35: an object start-up made (os.environ) given a class with a finaliser
import os


class Noisy(os._Environ):
    def __del__(self, write=os.write, leave=os._exit):
        write(1, b"os.environ finalised\n")
        leave(7)


os.environ.__class__ = Noisy
print("body")
