ns = {}
exec("def sq(x):\n    return x * x\ny = sq(7)", ns)
print(ns["y"], eval("sq(3) + 1", ns))
def helper(v):
    return v + 100
print(eval("helper(5)"))
code = compile("z = [helper(i) for i in range(3)]", "<gen>", "exec")
g = {"helper": helper}
exec(code, g)
print(g["z"])
