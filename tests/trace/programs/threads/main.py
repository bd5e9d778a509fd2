import threading
results = []
def worker(n):
    results.append(sum(range(n)))
ts = [threading.Thread(target=worker, args=(i * 10,)) for i in range(3)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(results))
