# issue 35: a finaliser added to the class of an object start-up made
# (os.environ): a cold teardown frees os.environ and runs it
import os


def fin(self, write=os.write, leave=os._exit):
    write(1, b"os.environ finalised\n")
    leave(7)


os._Environ.__del__ = fin
print("body")
