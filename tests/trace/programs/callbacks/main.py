import functools
words = ["banana", "Apple", "cherry", "date"]
print(sorted(words, key=lambda w: (len(w), w.lower())))
print(list(map(lambda x: x * 3, [1, 2, 3])))
print(list(filter(lambda x: x % 2, range(7))))
print(functools.reduce(lambda a, b: a * b, range(1, 6)))
print({k: v for k, v in zip("abc", range(3))}, [[j for j in range(i)] for i in range(3)], {c for c in "aab"})
class Key:
    def __init__(self, v):
        self.v = v
    def __lt__(self, other):
        return self.v > other.v
print([k.v for k in sorted([Key(1), Key(3), Key(2)])])
