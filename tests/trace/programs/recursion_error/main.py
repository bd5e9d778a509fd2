def down(n):
    return down(n + 1) + 1
print("start")
down(0)
