words = {"alpha", "beta", "gamma", "delta", "epsilon"}
print(list(words), hash("abc") == hash("abc"))
print({w: len(w) for w in words})
