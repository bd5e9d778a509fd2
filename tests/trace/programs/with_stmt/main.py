class Ctx:
    def __init__(self, name, swallow):
        self.name, self.swallow = name, swallow
    def __enter__(self):
        print("enter", self.name)
        return self
    def __exit__(self, et, ev, tb):
        print("exit", self.name, et.__name__ if et else None)
        return self.swallow
with Ctx("a", False) as c:
    print("inside", c.name)
with Ctx("b", True):
    raise KeyError("swallowed")
try:
    with Ctx("c", False):
        raise IndexError("passes")
except IndexError as e:
    print("got", e)
