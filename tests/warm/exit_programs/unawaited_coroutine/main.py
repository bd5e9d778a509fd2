import warnings
warnings.simplefilter("always")
async def work():
    return 1
c = work()
print("made a coroutine, never awaited")
