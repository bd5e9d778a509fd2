def work():
    raise KeyboardInterrupt
print("working", flush=True)
work()
