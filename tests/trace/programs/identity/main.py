import sys
print(__name__, __spec__, __package__, __cached__, __doc__)
print(type(__builtins__).__name__, __builtins__ is sys.modules["builtins"])
print(__file__, sys.argv)
print(sys.path[0])
print(list(globals()))
print(type(__loader__).__name__, __loader__.name, __loader__.path)
print(getattr(sys, "orig_argv", ["?", "?"])[1:])
import __main__
print(__main__.__dict__ is globals(), sys.modules["__main__"] is __main__)
print(sorted(sys.modules))
