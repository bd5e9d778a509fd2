import weakref
class A: pass
a = A()
r = weakref.ref(a, lambda ref: print("callback at exit"))
print("body")
