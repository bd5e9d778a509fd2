import collections, re
def f(x):
    return collections.Counter(re.findall(r"\w", x))
print(f("abca"))
assert f("ab") == {"a": 2}, "wrong"
